// Command fakeraft stands in for "fuseraft repl --vscode" in the benchmarks, so fr-stream
// can be measured against reading the child's stdout directly. It prints ready, then either
// the events of a file as fast as the pipe takes them (FAKERAFT_FILE, a flood), or
// FAKERAFT_N token events at FAKERAFT_RATE per second, each stamped with the Unix time in
// nanoseconds at which it is written ("ts"), then session_end, and exits 0.
package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "fakeraft: %v\n", err)
		os.Exit(1)
	}
}

func run() error {
	w := bufio.NewWriterSize(os.Stdout, 1<<16)
	fmt.Fprintln(w, `{"type":"ready","protocolVersion":1,"sessionId":"bench-fakeraft","model":"bench","title":null,"autoTitle":null,"midTurnCommands":[]}`)
	if path := os.Getenv("FAKERAFT_FILE"); path != "" {
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		br := bufio.NewReaderSize(f, 1<<20)
		first, err := br.Peek(64)
		if err != nil && err != io.EOF {
			return err
		}
		if bytes.Contains(first, []byte(`"type":"ready"`)) {
			if _, err := br.ReadBytes('\n'); err != nil {
				return err
			}
		}
		if _, err := io.Copy(w, br); err != nil {
			return err
		}
	} else {
		n, _ := strconv.Atoi(os.Getenv("FAKERAFT_N"))
		rate, _ := strconv.ParseFloat(os.Getenv("FAKERAFT_RATE"), 64)
		if n <= 0 {
			n = 1000
		}
		if rate <= 0 {
			rate = 1000
		}
		if err := w.Flush(); err != nil {
			return err
		}
		interval := time.Duration(float64(time.Second) / rate)
		start := time.Now()
		var buf []byte
		for i := 0; i < n; i++ {
			if d := time.Until(start.Add(time.Duration(i) * interval)); d > 0 {
				time.Sleep(d)
			}
			buf = fmt.Appendf(buf[:0], `{"type":"token","text":"tok%d ","ts":%d}`+"\n", i, time.Now().UnixNano())
			if _, err := os.Stdout.Write(buf); err != nil {
				return err
			}
		}
	}
	fmt.Fprintln(w, `{"type":"message_end","turnIndex":1,"toolCalls":[]}`)
	fmt.Fprintln(w, `{"type":"session_end"}`)
	return w.Flush()
}

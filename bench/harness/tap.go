package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"time"

	"github.com/coder/websocket"
)

// cmdTap passes stdin to stdout line by line, unbuffered, and times approval round trips:
// from an approval_request line to the next line of any kind, which a daemon only sends once
// it has the answer. At the end of input it appends the result (with its samples) to -o.
func cmdTap(args []string) error {
	fs := flag.NewFlagSet("tap", flag.ExitOnError)
	out := fs.String("o", "", "append the result as JSON to this file")
	label := fs.String("label", "pipeline", "label of the result")
	title := fs.String("title", "", "title of the result")
	fs.Parse(args)
	res := latResult{Kind: "roundtrip", Time: stamp(), Label: *label, Title: *title}
	br := bufio.NewReaderSize(os.Stdin, 1<<16)
	var pending time.Time
	broken := false
	for {
		line, err := br.ReadSlice('\n')
		if len(line) > 0 {
			now := time.Now()
			if !pending.IsZero() {
				res.Samples = append(res.Samples, float64(now.Sub(pending).Nanoseconds())/1e3)
				pending = time.Time{}
			}
			if bytes.Contains(line, []byte(`"type":"approval_request"`)) {
				pending = now
				res.Sent++
			}
			if !broken {
				if _, werr := os.Stdout.Write(line); werr != nil {
					broken = true
				}
			}
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			break
		}
	}
	res.finish()
	if *out == "" {
		return nil
	}
	return appendJSON(*out, res)
}

// cmdAnswer is the smallest possible policy: approved:true for every approval_request,
// a skipped answer for every question, written the moment the prompt is read. With -decode
// it also decodes each approval_request's fields with encoding/json first: the floor of a
// policy that reads what it decides on.
func cmdAnswer(args []string) error {
	fs := flag.NewFlagSet("answer", flag.ExitOnError)
	out := fs.String("o", "", "write answers to this file or FIFO (opened at the first answer) instead of stdout")
	decode := fs.Bool("decode", false, "decode every approval_request (encoding/json) before answering it")
	fs.Parse(args)
	var w *os.File
	br := bufio.NewReaderSize(os.Stdin, 1<<16)
	for {
		line, err := br.ReadSlice('\n')
		var ans string
		switch {
		case bytes.Contains(line, []byte(`"type":"approval_request"`)):
			ans = `{"type":"approval_response","approved":true}` + "\n"
			if *decode {
				var req approvalFields
				if json.Unmarshal(line, &req) != nil || req.Kind == "" {
					ans = `{"type":"approval_response","approved":false}` + "\n"
				}
			}
		case bytes.Contains(line, []byte(`"type":"question"`)):
			ans = `{"type":"question_response","answer":null}` + "\n"
		}
		if ans != "" {
			if w == nil {
				w = os.Stdout
				if *out != "" {
					f, oerr := os.OpenFile(*out, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
					if oerr != nil {
						return oerr
					}
					defer f.Close()
					w = f
				}
			}
			if _, werr := w.Write([]byte(ans)); werr != nil {
				return werr
			}
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return nil
		}
	}
}

// approvalFields are the fields of an approval_request a policy decides on.
type approvalFields struct {
	Type, Kind, Command, Path, OldContent, NewContent string
	Plugin, Action, Detail, Keyword, SourceAgent      string
	TargetAgent                                       string
}

// cmdSock is the raw client: it connects to a serve socket, sends one task and copies every
// line to stdout (flushed whenever the socket has nothing more ready) until the task's result.
func cmdSock(args []string) error {
	fs := flag.NewFlagSet("sock", flag.ExitOnError)
	path := fs.String("socket", "", "Unix socket of the daemon")
	task := fs.String("task", "flood 10000", "task text")
	fs.Parse(args)
	c, err := net.Dial("unix", *path)
	if err != nil {
		return err
	}
	defer c.Close()
	if _, err := fmt.Fprintf(c, "{\"type\":\"user_input\",\"text\":%q}\n", *task); err != nil {
		return err
	}
	br := bufio.NewReaderSize(c, 1<<16)
	bw := bufio.NewWriterSize(os.Stdout, 1<<16)
	defer bw.Flush()
	for {
		line, err := br.ReadSlice('\n')
		if len(line) > 0 {
			bw.Write(line)
			if !errors.Is(err, bufio.ErrBufferFull) && bytes.Contains(line, []byte(`"type":"result"`)) {
				return nil
			}
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return fmt.Errorf("socket closed before the result: %v", err)
		}
		if br.Buffered() == 0 {
			if err := bw.Flush(); err != nil {
				return err
			}
		}
	}
}

// cmdWS is the raw WebSocket client: one task, every message to stdout until the result. It
// reads messages as fr-attach does (websocket.Conn.Read with a context that has no deadline:
// one call a message), so it is the floor of a client of the same library; with -batch it
// writes out 64 KiB at a time, at least as few writes as fr-attach's flush when idle.
func cmdWS(args []string) error {
	fs := flag.NewFlagSet("ws", flag.ExitOnError)
	url := fs.String("url", "", "ws://HOST:PORT/attach")
	task := fs.String("task", "flood 10000", "task text")
	batch := fs.Bool("batch", false, "write out only when 64 KiB are buffered (throughput), not after each message (latency)")
	fs.Parse(args)
	dctx, dcancel := context.WithTimeout(context.Background(), time.Minute)
	defer dcancel()
	c, _, err := websocket.Dial(dctx, *url, nil)
	if err != nil {
		return err
	}
	defer c.CloseNow()
	c.SetReadLimit(256 << 20)
	// A deadline would make the library arm a timer for every message.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := c.Write(ctx, websocket.MessageText, fmt.Appendf(nil, "{\"type\":\"user_input\",\"text\":%q}", *task)); err != nil {
		return err
	}
	bw := bufio.NewWriterSize(os.Stdout, 1<<16)
	defer bw.Flush()
	for {
		_, msg, err := c.Read(ctx)
		if err != nil {
			return fmt.Errorf("connection closed before the result: %v", err)
		}
		msg = bytes.TrimRight(msg, "\n")
		bw.Write(msg)
		bw.WriteByte('\n')
		// A message boundary says nothing about what is ready next: write each one out
		// at once, as websocat or a browser console would.
		if !*batch {
			if err := bw.Flush(); err != nil {
				return err
			}
		}
		if bytes.Contains(msg, []byte(`"type":"result"`)) {
			c.Close(websocket.StatusNormalClosure, "")
			return nil
		}
	}
}

// cmdScan is the floor of a line filter: a plain Go line scan that copies the lines
// containing "type":"<T>" (bytes.Contains, no JSON decoding) from stdin to stdout.
func cmdScan(args []string) error {
	fs := flag.NewFlagSet("scan", flag.ExitOnError)
	typ := fs.String("type", "approval_request", "event type to keep")
	fs.Parse(args)
	needle := []byte(`"type":"` + *typ + `"`)
	return passLines(bufio.NewReaderSize(os.Stdin, 1<<20), false, func(line []byte) bool { return bytes.Contains(line, needle) })
}

// passLines copies the lines of br (line end included) for which keep is true to stdout,
// 64 KiB at a time, and also whenever br has nothing more buffered when idleFlush is set.
func passLines(br *bufio.Reader, idleFlush bool, keep func(line []byte) bool) error {
	bw := bufio.NewWriterSize(os.Stdout, 1<<16)
	var long []byte
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			long = append(long, line...)
			continue
		}
		if len(long) > 0 {
			line = append(long, line...)
			long = long[:0]
		}
		if len(line) > 0 && keep(line) {
			if _, werr := bw.Write(line); werr != nil {
				return werr
			}
		}
		if err != nil {
			if ferr := bw.Flush(); err == io.EOF {
				return ferr
			}
			return err
		}
		if idleFlush && br.Buffered() == 0 {
			if err := bw.Flush(); err != nil {
				return err
			}
		}
	}
}

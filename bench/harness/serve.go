package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/coder/websocket"
)

// cmdServe is a minimal serve daemon for per-event latency: on its Unix socket and on a
// WebSocket at /attach it sends hello, then for every task line it receives: queued, -n
// tool_calling events at -rate per second, each stamped with the Unix time in nanoseconds
// at which it is written ("ts"), and a successful result. fr-sim serve has no such stamps.
func cmdServe(args []string) error {
	fs := flag.NewFlagSet("serve", flag.ExitOnError)
	sock := fs.String("socket", "", "Unix socket to listen on")
	addr := fs.String("listen", "127.0.0.1:0", "TCP address of the WebSocket")
	ready := fs.String("ready-file", "", "write {\"socket\",\"url\"} here once listening")
	rate := fs.Float64("rate", 1000, "events per second of each task")
	n := fs.Int("n", 1000, "events per task")
	broadcast := fs.Bool("broadcast", false, "send each task's tool_calling events to every socket client, as a daemon broadcasts progress")
	fs.Parse(args)
	var tasks atomic.Int64
	var connMu sync.Mutex
	conns := map[net.Conn]*sync.Mutex{}
	play := func(send func([]byte) error, text string) error {
		emit := send
		if *broadcast {
			emit = func(b []byte) error {
				line := append(append([]byte(nil), b...), '\n')
				connMu.Lock()
				defer connMu.Unlock()
				for c, mu := range conns {
					mu.Lock()
					c.Write(line)
					mu.Unlock()
				}
				return nil
			}
		}
		id := fmt.Sprintf("bench-%d", tasks.Add(1))
		if err := send(fmt.Appendf(nil, `{"type":"queued","sessionId":%q,"position":0}`, id)); err != nil {
			return err
		}
		interval := time.Duration(float64(time.Second) / *rate)
		start := time.Now()
		var buf []byte
		for i := 0; i < *n; i++ {
			if d := time.Until(start.Add(time.Duration(i) * interval)); d > 0 {
				time.Sleep(d)
			}
			buf = fmt.Appendf(buf[:0], `{"type":"tool_calling","agent":"bench","tool":"read_file","argsSummary":"e%d","ts":%d}`, i, time.Now().UnixNano())
			if err := emit(buf); err != nil {
				return err
			}
		}
		t, _ := json.Marshal(text)
		return send(fmt.Appendf(nil, `{"type":"result","sessionId":%q,"task":%s,"succeeded":true,"errorMessage":null,"lastAgent":"bench","lastMessage":"done"}`, id, t))
	}
	hello := []byte(`{"type":"hello","protocolVersion":1,"clientId":null,"readOnly":false,"inFlight":null,"pendingResults":[]}`)
	taskText := func(line []byte) string {
		var in struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if json.Unmarshal(line, &in) == nil && in.Type != "" {
			return in.Text
		}
		return string(line)
	}

	os.Remove(*sock)
	ln, err := net.Listen("unix", *sock)
	if err != nil {
		return err
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				mu := &sync.Mutex{}
				connMu.Lock()
				conns[c] = mu
				connMu.Unlock()
				defer func() {
					connMu.Lock()
					delete(conns, c)
					connMu.Unlock()
				}()
				send := func(b []byte) error {
					mu.Lock()
					defer mu.Unlock()
					_, err := c.Write(append(b, '\n'))
					return err
				}
				if send(hello) != nil {
					return
				}
				sc := bufio.NewScanner(c)
				sc.Buffer(nil, 1<<20)
				for sc.Scan() {
					if play(send, taskText(sc.Bytes())) != nil {
						return
					}
				}
			}()
		}
	}()
	tl, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		ctx := r.Context()
		send := func(b []byte) error { return c.Write(ctx, websocket.MessageText, b) }
		if send(hello) != nil {
			return
		}
		for {
			_, msg, err := c.Read(ctx)
			if err != nil || play(send, taskText(msg)) != nil {
				return
			}
		}
	})}
	go srv.Serve(tl)
	url := "ws://" + tl.Addr().String() + "/attach"
	if *ready != "" {
		b, _ := json.Marshal(map[string]string{"socket": *sock, "url": url})
		if err := os.WriteFile(*ready+".tmp", b, 0o644); err != nil {
			return err
		}
		if err := os.Rename(*ready+".tmp", *ready); err != nil {
			return err
		}
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	<-sig
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	srv.Shutdown(ctx)
	os.Remove(*sock)
	return nil
}

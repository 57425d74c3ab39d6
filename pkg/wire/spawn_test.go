//go:build unix

package wire_test

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fuseraft/fr/internal/testkit"
	"github.com/fuseraft/fr/pkg/wire"
)

// readAll takes every line of conn until it ends, and returns the event types and the end.
func readAll(t *testing.T, conn *wire.Conn) ([]string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testkit.Bound(20*time.Second))
	defer cancel()
	var types []string
	for {
		l, err := conn.Next(ctx)
		if err != nil {
			return types, err
		}
		if ev, ok := l.Event(); ok {
			types = append(types, ev.Type)
		}
	}
}

func TestSpawnReplEndsWithItsSession(t *testing.T) {
	conn, err := wire.Spawn(context.Background(), wire.Repl(), wire.Options{})
	if err != nil {
		t.Fatal(err)
	}
	in, _ := wire.ParseInput([]byte("hello"))
	conn.Send(in)
	// The message waits for ready, goes, and its turn ends; the REPL then waits for more.
	ctx, cancel := context.WithTimeout(context.Background(), testkit.Bound(20*time.Second))
	defer cancel()
	var types []string
	for len(types) == 0 || types[len(types)-1] != wire.TypeMessageEnd {
		l, err := conn.Next(ctx)
		if err != nil {
			t.Fatalf("%v after %v", err, types)
		}
		if ev, ok := l.Event(); ok {
			types = append(types, ev.Type)
		}
	}
	if types[0] != wire.TypeReady || types[1] != wire.TypeTurnStart {
		t.Errorf("events %v, want ready, turn_start, ...", types)
	}
	// Close ends fuseraft's input: it ends its session and exits 0 by itself.
	start := time.Now()
	if err := conn.Close(); err != nil {
		t.Errorf("Close: %v, want nil (exit status 0)", err)
	}
	if d := time.Since(start); d > testkit.Bound(5*time.Second) {
		t.Errorf("Close took %v: it waited out its grace instead of for the exit", d)
	}
}

func TestSpawnRunReadsToTheEnd(t *testing.T) {
	conn, err := wire.Spawn(context.Background(), wire.Run("-c", "dev.yaml", "tidy"), wire.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Deny everything: the run fails at the route, and says so in its result.
	ctx, cancel := context.WithTimeout(context.Background(), testkit.Bound(20*time.Second))
	defer cancel()
	var types []string
	for {
		l, err := conn.Next(ctx)
		if err != nil {
			if err != io.EOF {
				t.Errorf("end %v, want io.EOF", err)
			}
			break
		}
		ev, _ := l.Event()
		if ev.Type == wire.TypeApproval {
			conn.Answer(wire.Input{Line: wire.ApprovalResponse(false), Type: wire.TypeApprovalResponse})
		}
		types = append(types, ev.Type)
	}
	if len(types) < 2 || types[0] != wire.TypeReady || types[len(types)-1] != wire.TypeResult {
		t.Errorf("events %v, want ready ... result", types)
	}
	var ee *exec.ExitError
	if err := conn.Close(); !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Errorf("Close: %v, want exit status 1 (the run's exitCode)", err)
	}
}

// script writes an executable shell script and returns its path.
func script(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "fake-fuseraft")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

const readyLine = `echo '{"type":"ready","protocolVersion":1,"sessionId":"s"}'`

func TestSpawnCloseStopsAFuseraftThatWillNotEnd(t *testing.T) {
	// It ignores the end of its input and SIGTERM; what it started holds its stdout.
	bin := script(t, "trap '' TERM\n"+readyLine+"\nsleep 60 &\nwhile :; do sleep 1; done")
	conn, err := wire.Spawn(context.Background(), wire.Command{Bin: bin, Args: []string{"run"}, Grace: 100 * time.Millisecond}, wire.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if l, err := conn.Next(context.Background()); err != nil || l.Kind != wire.EventLine {
		t.Fatalf("first line %+v, %v", l, err)
	}
	start := time.Now()
	err = conn.Close()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Errorf("Close: %v, want killed by SIGKILL", err)
	}
	if d := time.Since(start); d > testkit.Bound(10*time.Second) {
		t.Errorf("Close took %v", d)
	}
}

func TestSpawnStopsWhenTheContextEnds(t *testing.T) {
	bin := script(t, readyLine+"\nexec sleep 60")
	ctx, cancel := context.WithCancel(context.Background())
	conn, err := wire.Spawn(ctx, wire.Command{Bin: bin, Args: []string{"repl"}}, wire.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	if _, err := readAll(t, conn); err != io.EOF {
		t.Errorf("end %v, want io.EOF once the stopped fuseraft's stdout closed", err)
	}
	var ee *exec.ExitError
	if err := conn.Close(); !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGTERM {
		t.Errorf("Close: %v, want killed by SIGTERM", err)
	}
}

func TestSpawnKeepsReadingAfterItsInputBroke(t *testing.T) {
	// fuseraft stops reading at once, then writes its result: an input that cannot be
	// written must not cost the lines it writes after.
	bin := script(t, "exec 0<&-\n"+readyLine+"\nsleep 0.5\n"+`echo '{"type":"result","sessionId":"s","succeeded":true,"exitCode":0}'`)
	conn, err := wire.Spawn(context.Background(), wire.Command{Bin: bin, Args: []string{"run"}}, wire.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	l, err := conn.Next(context.Background())
	if err != nil || l.Kind != wire.EventLine {
		t.Fatalf("first line %+v, %v", l, err)
	}
	conn.Send(wire.Input{Line: wire.Interrupt(), Type: wire.TypeInterrupt})
	types, err := readAll(t, conn)
	if err != io.EOF || len(types) != 1 || types[0] != wire.TypeResult {
		t.Errorf("after the failed write: %v, %v; want the result, then io.EOF", types, err)
	}
}

func TestSpawnRefusesOtherCommands(t *testing.T) {
	_, err := wire.Spawn(context.Background(), wire.Command{Args: []string{"serve"}}, wire.Options{})
	if err == nil || !strings.Contains(err.Error(), "repl --vscode or run --bridge") {
		t.Errorf("Spawn(serve): %v", err)
	}
	if _, err := wire.Spawn(context.Background(), wire.Command{Bin: "/nonexistent/fuseraft", Args: []string{"run"}}, wire.Options{}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Spawn of a missing binary: %v", err)
	}
}

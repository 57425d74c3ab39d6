package sessioninput

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fuseraft/fr/internal/testkit"
	"github.com/fuseraft/fr/pkg/wire"
)

func collect(t *testing.T, s Source) []string {
	t.Helper()
	var got []string
	ctx, cancel := context.WithTimeout(context.Background(), testkit.Bound(10*time.Second))
	defer cancel()
	if err := s.Read(ctx, func(b []byte) error { got = append(got, string(b)); return nil }); err != nil {
		t.Fatal(err)
	}
	return got
}

func TestSourceStdin(t *testing.T) {
	got := collect(t, Source{Stdin: strings.NewReader("a\r\n\nb\nlast")})
	if strings.Join(got, "|") != "a||b|last" {
		t.Errorf("got %q", got)
	}
	if got := collect(t, Source{}); len(got) != 0 {
		t.Errorf("no stdin: got %q", got)
	}
}

func TestSourceRegularFileEndsAtEOF(t *testing.T) {
	p := filepath.Join(t.TempDir(), "in.txt")
	os.WriteFile(p, []byte("one\ntwo\n"), 0o600)
	if got := collect(t, Source{Path: p}); strings.Join(got, "|") != "one|two" {
		t.Errorf("got %q", got)
	}
}

func writeFIFO(t *testing.T, p string, lines ...string) {
	t.Helper()
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		t.Error(err)
		return
	}
	defer f.Close()
	for _, l := range lines {
		f.WriteString(l)
	}
}

// Writers come and go: each closing the pipe is not the end of input; an explicit stop (here:
// fn's error) ends it.
func TestSourceFIFOReopens(t *testing.T) {
	p := mkfifo(t)
	stop := errors.New("stop")
	var got []string
	done := make(chan error, 1)
	go func() {
		done <- Source{Path: p}.Read(context.Background(), func(b []byte) error {
			got = append(got, string(b))
			if string(b) == "end" {
				return stop
			}
			return nil
		})
	}()
	writeFIFO(t, p, "one\n", "two\n")
	writeFIFO(t, p, "three\n")
	writeFIFO(t, p, "end\n")
	select {
	case err := <-done:
		if err != stop {
			t.Fatalf("Read = %v", err)
		}
	case <-testkit.After(10 * time.Second):
		t.Fatal("Read did not return")
	}
	if strings.Join(got, "|") != "one|two|three|end" {
		t.Errorf("got %q", got)
	}
}

func TestSourceFIFOOnce(t *testing.T) {
	p := mkfifo(t)
	var got []string
	done := make(chan error, 1)
	go func() {
		done <- Source{Path: p, Once: true}.Read(context.Background(), func(b []byte) error {
			got = append(got, string(b))
			return nil
		})
	}()
	writeFIFO(t, p, "only\n")
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-testkit.After(10 * time.Second):
		t.Fatal("Read did not return at the first end of file")
	}
	if strings.Join(got, "|") != "only" {
		t.Errorf("got %q", got)
	}
}

// Cancelling unblocks a read waiting on a writer that holds the pipe open.
func TestSourceFIFOCancel(t *testing.T) {
	p := mkfifo(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Source{Path: p}.Read(ctx, func([]byte) error { return nil }) }()
	w, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	w.WriteString("x\n")
	time.AfterFunc(50*time.Millisecond, cancel)
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Read = %v, want context.Canceled", err)
		}
	case <-testkit.After(10 * time.Second):
		t.Fatal("Read was not unblocked by cancel")
	}
}

type recorder struct {
	mu      sync.Mutex
	sent    []string
	dropped []string
}

// startedGate is a Stdio Gate that has seen ready.
func startedGate() *wire.Gate {
	g := wire.NewGate(wire.Stdio)
	g.Observe(ev("ready", `{"type":"ready","protocolVersion":1,"sessionId":"s","model":"m","title":null,"autoTitle":null,"midTurnCommands":[]}`))
	return g
}

func (r *recorder) pump() *Pump {
	return &Pump{
		Gate: startedGate(),
		Send: func(b []byte) error {
			r.mu.Lock()
			r.sent = append(r.sent, string(b))
			r.mu.Unlock()
			return nil
		},
		Dropped: func(d wire.Decision) {
			r.mu.Lock()
			r.dropped = append(r.dropped, d.Input.Type)
			r.mu.Unlock()
		},
	}
}

func (r *recorder) waitSent(t *testing.T, n int) []string {
	t.Helper()
	deadline := time.Now().Add(testkit.Bound(5 * time.Second))
	for {
		r.mu.Lock()
		got := append([]string(nil), r.sent...)
		r.mu.Unlock()
		if len(got) >= n || time.Now().After(deadline) {
			return got
		}
		time.Sleep(time.Millisecond)
	}
}

func ev(typ, raw string) wire.Event { return wire.Event{Type: typ, Raw: []byte(raw)} }

func TestPumpHoldsInputDuringPrompt(t *testing.T) {
	r := &recorder{}
	p := r.pump()
	type result struct {
		held int
		err  error
	}
	done := make(chan result, 1)
	go func() { h, err := p.Run(context.Background()); done <- result{h, err} }()

	p.Push([]byte("first"))
	if got := r.waitSent(t, 1); len(got) != 1 {
		t.Fatalf("sent %q", got)
	}
	p.Observe(ev("approval_request", `{"type":"approval_request","kind":"shell_command","command":"ls"}`))
	p.Push([]byte("typed ahead"))
	p.Push([]byte("   "))
	time.Sleep(20 * time.Millisecond)
	if got := r.waitSent(t, 1); len(got) != 1 {
		t.Fatalf("a line went through while a prompt was pending: %q", got)
	}
	p.Push([]byte(`{"type":"approval_response","approved":false}`))
	if got := r.waitSent(t, 2); len(got) != 2 {
		t.Fatalf("the answer did not go: %q", got)
	}
	// "first" started a turn: the message typed during it waits for its end
	time.Sleep(20 * time.Millisecond)
	if got := r.waitSent(t, 2); len(got) != 2 {
		t.Fatalf("a message went during the turn: %q", got)
	}
	p.Observe(ev("message_end", `{"type":"message_end","turnIndex":0,"toolCalls":[]}`))
	got := r.waitSent(t, 3)
	want := []string{`{"type":"user_input","text":"first"}`, `{"type":"approval_response","approved":false}`, `{"type":"user_input","text":"typed ahead"}`}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("sent\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	p.Push([]byte(`{"type":"question_response","answer":null}`))
	for deadline := time.Now().Add(testkit.Bound(5 * time.Second)); ; time.Sleep(time.Millisecond) {
		r.mu.Lock()
		n := len(r.dropped)
		r.mu.Unlock()
		if n == 1 || time.Now().After(deadline) {
			break
		}
	}
	// A prompt nobody will answer: ending input returns what is still held.
	p.Observe(ev("question", `{"type":"question","question":"?","options":[],"allowOther":true}`))
	p.Push([]byte("never sent"))
	p.EndInput()
	select {
	case res := <-done:
		if res.err != nil || res.held != 1 {
			t.Errorf("Run = %d, %v; want 1 held", res.held, res.err)
		}
	case <-testkit.After(5 * time.Second):
		t.Fatal("Run did not return after EndInput")
	}
	if strings.Join(r.dropped, ",") != "question_response" {
		t.Errorf("dropped %q", r.dropped)
	}
}

func TestPumpInterruptOutOfBand(t *testing.T) {
	r := &recorder{}
	p := r.pump()
	interrupts := 0
	p.Interrupt = func() bool { interrupts++; return true }
	p.Observe(ev("approval_request", `{"type":"approval_request","kind":"x"}`))
	p.Push([]byte(`{"type":"interrupt"}`))
	p.EndInput()
	if held, err := p.Run(context.Background()); held != 0 || err != nil {
		t.Fatalf("Run = %d, %v", held, err)
	}
	if interrupts != 1 || len(r.sent) != 0 {
		t.Errorf("interrupts = %d, sent %q", interrupts, r.sent)
	}

	// Without the hook the interrupt is a line, and waits for the prompt like any other.
	r = &recorder{}
	p = r.pump()
	p.Observe(ev("approval_request", `{"type":"approval_request","kind":"x"}`))
	p.Push([]byte(`{"type":"interrupt"}`))
	p.Push([]byte(`{"type":"approval_response","approved":true}`))
	p.EndInput()
	p.Run(context.Background())
	if strings.Join(r.sent, "|") != `{"type":"approval_response","approved":true}|{"type":"interrupt"}` {
		t.Errorf("sent %q", r.sent)
	}
}

func TestPumpSendError(t *testing.T) {
	p := &Pump{Gate: startedGate(), Send: func([]byte) error { return os.ErrClosed }}
	p.Push([]byte("a"))
	if _, err := p.Run(context.Background()); !errors.Is(err, os.ErrClosed) {
		t.Errorf("Run = %v", err)
	}
}

// FuzzPump feeds arbitrary input lines and events: nothing panics, and while a prompt is
// pending only the matching response is ever sent.
func FuzzPump(f *testing.F) {
	f.Add("hello\n{\"type\":\"approval_response\",\"approved\":true}\n{\"type\":\"interrupt\"}", "approval_request\nmessage_end")
	f.Add("{\"type\":\"question_response\",\"answer\":\"x\"}\n{}\n[1]\n  \n{\"type\":", "question\ncancelled\nquestion")
	f.Fuzz(func(t *testing.T, inputs, events string) {
		g := startedGate()
		var sent []wire.Input
		p := &Pump{Gate: g, Send: func(b []byte) error {
			in, _ := wire.ParseInput(b)
			response := in.Type == wire.TypeApprovalResponse || in.Type == wire.TypeQuestionResponse
			if pend := g.Pending(); pend != "" && !response {
				t.Fatalf("sent %s while %s was pending", b, pend)
			}
			sent = append(sent, in)
			return nil
		}}
		evs := strings.Split(events, "\n")
		for i, line := range strings.Split(inputs, "\n") {
			if i < len(evs) {
				p.Observe(wire.Event{Type: evs[i], Raw: []byte(`{"type":"` + evs[i] + `"}`)})
			}
			p.Push([]byte(line))
		}
		p.EndInput()
		// Messages held for a turn that no event ends wait for it (in fr-stream, until
		// fuseraft exits and the context is cancelled); anything else returns at once.
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		if _, err := p.Run(ctx); err != nil && !(errors.Is(err, context.DeadlineExceeded) && g.Busy() && g.Waiting() > 0) {
			t.Fatal(err)
		}
	})
}

// Abort ends input without waiting for the running turn: messages held for it are not sent.
func TestPumpAbort(t *testing.T) {
	r := &recorder{}
	p := r.pump()
	done := make(chan int, 1)
	go func() { h, _ := p.Run(context.Background()); done <- h }()
	p.Push([]byte("first"))
	p.Push([]byte("second"))
	if got := r.waitSent(t, 1); len(got) != 1 {
		t.Fatalf("sent %q", got)
	}
	p.EndInput()
	select {
	case h := <-done:
		t.Fatalf("Run returned (%d held) while a turn it holds a message for runs", h)
	case <-time.After(50 * time.Millisecond):
	}
	p.Abort()
	select {
	case h := <-done:
		if h != 1 {
			t.Errorf("Run = %d held, want 1", h)
		}
	case <-testkit.After(5 * time.Second):
		t.Fatal("Run did not return after Abort")
	}
	if got := r.waitSent(t, 1); len(got) != 1 {
		t.Errorf("sent %q after Abort", got)
	}
}

// Push blocks while MaxHeld inputs are held, so that a reader feeding it stops reading input
// (backpressure) instead of holding all of it; each input sent makes room for one more.
func TestPumpBackpressure(t *testing.T) {
	r := &recorder{}
	p := r.pump()
	p.MaxHeld = 3
	full := 0
	p.Full = func(held int) { full++ }
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() { p.Run(ctx); close(done) }()
	p.Push([]byte("first")) // starts a turn: what follows is held until it ends
	r.waitSent(t, 1)
	for _, l := range []string{"b", "c", "d"} {
		p.Push([]byte(l))
	}
	pushed := make(chan struct{})
	go func() { p.Push([]byte("e")); close(pushed) }()
	select {
	case <-pushed:
		t.Fatalf("Push returned with %d inputs held (MaxHeld 3)", p.Gate.Waiting())
	case <-time.After(50 * time.Millisecond):
	}
	if p.Gate.Waiting() != 3 {
		t.Errorf("%d held, want 3", p.Gate.Waiting())
	}
	p.Observe(ev("message_end", `{"type":"message_end","turnIndex":0,"toolCalls":[]}`))
	select {
	case <-pushed:
	case <-testkit.After(5 * time.Second):
		t.Fatal("Push still blocked after an input was sent")
	}
	if got := r.waitSent(t, 2); strings.Join(got, "|") != `{"type":"user_input","text":"first"}|{"type":"user_input","text":"b"}` {
		t.Errorf("sent %q", got)
	}
	if full != 1 {
		t.Errorf("Full called %d times, want 1", full)
	}
	// "b" started a turn: c, d, e are held, and Push waits again until Run returns, when
	// nothing will make room any more.
	blocked := make(chan bool, 1)
	go func() { _, ok := p.Push([]byte("f")); blocked <- ok }()
	select {
	case <-blocked:
		t.Fatal("Push returned with 3 inputs held")
	case <-time.After(50 * time.Millisecond):
	}
	cancel()
	<-done
	select {
	case ok := <-blocked:
		if ok {
			t.Error("Push queued an input after Run returned")
		}
	case <-testkit.After(5 * time.Second):
		t.Fatal("Push still blocked after Run returned")
	}
	if full != 2 {
		t.Errorf("Full called %d times, want 2", full)
	}
}

// The longest accepted input line is Source.MaxLine; a longer one is an error that says so.
func TestSourceLineTooLong(t *testing.T) {
	var got []string
	err := Source{Stdin: strings.NewReader("short\n" + strings.Repeat("x", 100) + "\nafter\n"), MaxLine: 50}.Read(context.Background(),
		func(b []byte) error { got = append(got, string(b)); return nil })
	if !wire.IsLineTooLong(err) || !strings.Contains(err.Error(), "input line 2 is longer than the limit of 50 bytes") {
		t.Errorf("err = %v", err)
	}
	if strings.Join(got, "|") != "short" {
		t.Errorf("read %q", got)
	}
}

// TestPumpObserveWakesOnlyForHeldInput: an event wakes Run only when input is held (a flood
// of events costs no goroutine switch each), and a message held for a turn still goes when
// the turn's end is observed.
func TestPumpObserveWakesOnlyForHeldInput(t *testing.T) {
	var r recorder
	p := r.pump()
	p.init()
	p.Observe(ev("token", `{"type":"token","text":"x"}`))
	if len(p.kick) != 0 {
		t.Fatal("an event with no input held woke Run")
	}
	p.Observe(ev("turn_start", `{"type":"turn_start"}`))
	p.Gate.Push(wire.Input{Line: []byte(`{"text":"next"}`), Type: wire.TypeUserInput})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go p.Run(ctx)
	time.Sleep(20 * time.Millisecond) // Run has looked, and waits for the turn to end
	if got := r.waitSent(t, 0); len(got) != 0 {
		t.Fatalf("sent during the turn: %q", got)
	}
	p.Observe(ev("message_end", `{"type":"message_end","turnIndex":1,"toolCalls":[]}`))
	if got := r.waitSent(t, 1); len(got) != 1 {
		t.Fatalf("the held message was not sent after the turn ended: %q", got)
	}
}

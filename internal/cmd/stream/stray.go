package stream

import (
	"io"

	"github.com/fuseraft/fr/internal/termsafe"
)

// maxStrayHeld bounds the stray lines a chat holds back for its header: past it they show at
// once, whatever is late.
const maxStrayHeld = 256

// stray passes on a line of fuseraft's stdout that is not an event (a banner, a log line).
// In a chat it is shown on the screen, dimmed, in order with the conversation; else it goes
// to stderr as it came, made safe for a terminal.
func (ss *session) stray(b []byte) {
	if ss.term != nil {
		ss.term.stray(string(b))
		return
	}
	_, _ = io.WriteString(ss.errw, termsafe.Text(string(b))+"\n")
}

// stray shows a stray line above the input line, dimmed (the renderer sanitises it). Those
// that come before the first event wait until it is shown, so that the chat's header stays
// its first line.
func (t *terminal) stray(text string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.strays = append(t.strays, text)
	if t.shown || len(t.strays) >= maxStrayHeld {
		t.showStrays()
		t.ss.out.Flush()
		t.term.Settle()
	}
}

// showStrays renders the stray lines held. t.mu is held.
func (t *terminal) showStrays() {
	for _, s := range t.strays {
		t.rend.Aside(s)
	}
	t.strays = nil
}

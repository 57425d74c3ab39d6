package wire

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

// A second ready on one stream breaks the contract: the Conn ends with a ProtocolError after
// the lines before it, and the Gate never sees it (the first prompt stays pending, unvoided).
func TestConnSecondReadyIsAProtocolError(t *testing.T) {
	ready := `{"type":"ready","protocolVersion":1,"sessionId":"s","model":"m","title":null,"autoTitle":null,"midTurnCommands":[]}`
	lines := []string{ready, `{"type":"turn_start","text":""}`, shellPrompt, ready, shellPrompt}
	c := NewConn(strings.NewReader(strings.Join(lines, "\n")+"\n"), io.Discard, Options{})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var types []string
	var err error
	for {
		var l Line
		if l, err = c.Next(ctx); err != nil {
			break
		}
		types = append(types, l.Type)
	}
	var pe *ProtocolError
	if !errors.As(err, &pe) || !strings.Contains(pe.Error(), "second ready") {
		t.Fatalf("Next ended with %v, want a ProtocolError about a second ready", err)
	}
	if strings.Join(types, ",") != "ready,turn_start,approval_request" {
		t.Errorf("lines before the error: %v", types)
	}
	if c.Gate().Pending() != TypeApproval {
		t.Errorf("the first prompt is not pending any more: %q", c.Gate().Pending())
	}

	// One ready, as the contract says, ends at the stream's end.
	c2 := NewConn(strings.NewReader(strings.Join(lines[:3], "\n")+"\n"), io.Discard, Options{})
	defer c2.Close()
	for err = nil; err == nil; _, err = c2.Next(ctx) {
	}
	if !errors.Is(err, io.EOF) {
		t.Errorf("one ready: Next ended with %v, want io.EOF", err)
	}
}

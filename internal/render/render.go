// Package render shows fuseraft events to a person: the reply as it streams, tool calls as
// one-liners, prompts that stand out, diffs for file writes. Every command that renders for a
// terminal uses it.
package render

import (
	"fmt"
	"io"

	"github.com/fuseraft/fr/pkg/wire"
)

// Options configure a Renderer.
type Options struct {
	Color      bool // ANSI colour (decide with cmdutil.UseColor)
	Width      int  // terminal width in columns; 0 means 80
	Timestamps bool // prefix lines with the time the event was rendered
}

// Renderer renders a stream of events. It is not safe for concurrent use.
type Renderer struct {
	w    io.Writer
	opts Options
}

// New returns a Renderer writing to w.
func New(w io.Writer, opts Options) *Renderer { return &Renderer{w: w, opts: opts} }

// Event renders one event.
func (r *Renderer) Event(ev wire.Event) error {
	_, err := fmt.Fprintf(r.w, "%s\n", ev.Raw)
	return err
}

// Close ends any text still open (a reply streamed without a final newline).
func (r *Renderer) Close() error { return nil }

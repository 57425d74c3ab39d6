package stream

import (
	"os"
	"sync"

	"github.com/fuseraft/fr/internal/cmdutil"
)

// inputRecord is --record-input: every line sent to fuseraft, appended to a file as it was
// sent, so that fr-report --input-log can show a chat's own messages (fuseraft's output does
// not carry them). A nil *inputRecord records nothing.
type inputRecord struct {
	mu  sync.Mutex
	f   *os.File
	err error
}

// openInputRecord creates (or empties) the file at path, readable by its owner only: it holds
// what was typed.
func openInputRecord(path string) (*inputRecord, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, cmdutil.Usagef("--record-input: %v", err)
	}
	return &inputRecord{f: f}, nil
}

// line records one line sent, with its line end. The first failed write is kept for close.
func (r *inputRecord) line(b []byte) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err == nil {
		_, r.err = r.f.Write(b)
	}
}

// close closes the file and returns the first error writing it.
func (r *inputRecord) close() error {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	cerr := r.f.Close()
	if r.err == nil {
		r.err = cerr
	}
	if r.err != nil {
		return cmdutil.Errorf(cmdutil.ExitFailed, "--record-input: %v", r.err)
	}
	return nil
}

//go:build !unix

package budget

import (
	"errors"
	"io/fs"
	"os"
	"time"
)

// lockFile, without flock, creates path exclusively and removes it on release; a lock file
// older than a minute is taken to be left by a run that died.
func lockFile(path string) (func(), error) {
	for {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil {
			f.Close()
			return func() { os.Remove(path) }, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
		if fi, err := os.Stat(path); err == nil && time.Since(fi.ModTime()) > time.Minute {
			os.Remove(path)
			continue
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// alive cannot tell here: a turn in flight is forgotten only once it is a day old.
func alive(pid int) bool { return pid > 0 }

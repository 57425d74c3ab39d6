package budget

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"
)

// Store keeps the running totals shared by every run that names it, per day and per week: a
// file ([FileStore], --budget-file) or a NATS key-value bucket ([KVStore], --budget-kv).
type Store interface {
	// Name is what the limits' messages call it: the file's name, or the bucket's.
	Name() string
	// Commit adds d to the totals of the day and the week now falls in and, when t is not nil,
	// records the run's turn (see Turn) in the same update; it returns the totals and what
	// the store says of the other runs. A zero d and an unchanged turn only read.
	Commit(now time.Time, d Usage, t *Turn) (day, week Usage, sh Shared, err error)
}

// FileStore is a budget file: the running totals of every run that shares it, per day and per
// week, in local time. It is JSON a person can read:
//
//	{"version":1,
//	 "days":{"2026-12-01":{"runs":3,"turns":41,"inputTokens":1830000,...}},
//	 "weeks":{"2026-W49":{...}}}
//
// Every update takes an exclusive lock (flock on FILE.lock, beside it), reads the file, adds,
// writes a temporary file in the same directory and renames it over the file: readers never
// see half a file and concurrent runs never lose each other's figures. The new file is flushed
// to the disk (fsync) once the lock is released, so that no run waits for another's disk; a
// flush that fails is an error of the update all the same. The last 62 days and 53
// weeks are kept.
//
// The file also holds each run's turn in flight ("turnsInFlight", by run, with its process id)
// and the tokens of the largest turn recorded ("largestTurnTokens"): a run about to go on with
// a turn counts every other run's turn in flight as that large, so runs that start turns at
// the same moment do not each take the last of the budget. A turn in flight whose process has
// gone, or that is a day old, is forgotten.
type FileStore struct {
	path string
}

// fileVersion is the version of the budget file's format.
const fileVersion = 1

const (
	keepDays  = 62
	keepWeeks = 53
)

type storeFile struct {
	Version  int                 `json:"version"`
	Days     map[string]Usage    `json:"days"`
	Weeks    map[string]Usage    `json:"weeks"`
	InFlight map[string]inFlight `json:"turnsInFlight,omitempty"`
	Largest  int64               `json:"largestTurnTokens,omitempty"`
}

// inFlight is a run's turn in flight.
type inFlight struct {
	PID   int       `json:"pid"`
	Since time.Time `json:"since"`
}

// maxInFlight is how long a turn in flight is believed without its run saying more.
const maxInFlight = 24 * time.Hour

// Turn is what a run says of its turns as it commits: whether one is in flight, and the tokens
// of the largest that ended since it last said.
type Turn struct {
	Run      string // the run's id, unique among the runs sharing the file
	InFlight bool
	Done     int64
}

// Shared is what the file says of the other runs: their turns in flight, and the tokens of the
// largest turn recorded.
type Shared struct {
	Others  int
	Largest int64
}

// OpenStore returns the FileStore at path. The file need not exist; its directory must.
func OpenStore(path string) (*FileStore, error) {
	if path == "" {
		return nil, errors.New("no budget file given")
	}
	fi, err := os.Stat(filepath.Dir(path))
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%s is not a directory", filepath.Dir(path))
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return nil, fmt.Errorf("%s is a directory", path)
	}
	return &FileStore{path: path}, nil
}

// Name is the file's name as given.
func (s *FileStore) Name() string { return s.path }

// DayKey is the day t falls on, in local time: "2026-12-01".
func DayKey(t time.Time) string { return t.Local().Format("2006-01-02") }

// WeekKey is the ISO week t falls in, in local time: "2026-W49".
func WeekKey(t time.Time) string {
	y, w := t.Local().ISOWeek()
	return fmt.Sprintf("%04d-W%02d", y, w)
}

// Read returns the totals of the day and of the week now falls in.
func (s *FileStore) Read(now time.Time) (day, week Usage, err error) {
	return s.Add(now, Usage{})
}

// Add adds d to the totals of the day and of the week now falls in, and returns them. A zero
// d only reads (nothing is written).
func (s *FileStore) Add(now time.Time, d Usage) (day, week Usage, err error) {
	day, week, _, err = s.Commit(now, d, nil)
	return day, week, err
}

// Commit is Add, and, when t is not nil, records the run's turn (see Turn) in the same update,
// and returns what the file says of the other runs.
func (s *FileStore) Commit(now time.Time, d Usage, t *Turn) (day, week Usage, sh Shared, err error) {
	unlock, err := lockFile(s.path + ".lock")
	if err != nil {
		return Usage{}, Usage{}, Shared{}, fmt.Errorf("locking %s.lock: %w", s.path, err)
	}
	var written *os.File
	defer func() {
		unlock()
		if written != nil {
			// The rename under the lock orders the runs; the flush to the disk is only
			// durability, and waits outside the lock, so no run waits for another's disk.
			if serr := written.Sync(); serr != nil && err == nil {
				err = fmt.Errorf("writing %s: %w", s.path, serr)
			}
			written.Close()
		}
	}()
	f, err := s.load()
	if err != nil {
		return Usage{}, Usage{}, Shared{}, err
	}
	dk, wk := DayKey(now), WeekKey(now)
	changed := d != (Usage{})
	if t != nil {
		changed = f.turn(now, *t) || changed
		sh.Others = len(f.InFlight)
		if _, ok := f.InFlight[t.Run]; ok {
			sh.Others--
		}
	}
	sh.Largest = f.Largest
	if !changed {
		return f.Days[dk], f.Weeks[wk], sh, nil
	}
	f.Days[dk] = f.Days[dk].Add(d)
	f.Weeks[wk] = f.Weeks[wk].Add(d)
	prune(f.Days, keepDays)
	prune(f.Weeks, keepWeeks)
	if written, err = s.save(f); err != nil {
		return Usage{}, Usage{}, Shared{}, err
	}
	return f.Days[dk], f.Weeks[wk], sh, nil
}

// turn records t, forgetting the turns in flight of runs that are gone; it reports whether the
// file changed.
func (f *storeFile) turn(now time.Time, t Turn) bool {
	changed := false
	for id, fl := range f.InFlight {
		if id != t.Run && (now.Sub(fl.Since) > maxInFlight || !alive(fl.PID)) {
			delete(f.InFlight, id)
			changed = true
		}
	}
	if t.Done > f.Largest {
		f.Largest, changed = t.Done, true
	}
	_, was := f.InFlight[t.Run]
	switch {
	case t.InFlight && !was:
		if f.InFlight == nil {
			f.InFlight = map[string]inFlight{}
		}
		f.InFlight[t.Run] = inFlight{PID: os.Getpid(), Since: now.UTC()}
		changed = true
	case !t.InFlight && was:
		delete(f.InFlight, t.Run)
		changed = true
	}
	return changed
}

func (s *FileStore) load() (*storeFile, error) {
	f := &storeFile{Version: fileVersion}
	b, err := os.ReadFile(s.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, err
	case len(bytes.TrimSpace(b)) > 0:
		if err := json.Unmarshal(b, f); err != nil {
			return nil, fmt.Errorf("%s is not a budget file: %v", s.path, err)
		}
		if f.Version != fileVersion {
			return nil, fmt.Errorf("%s: version %d: this build reads version %d", s.path, f.Version, fileVersion)
		}
		for _, m := range []map[string]Usage{f.Days, f.Weeks} {
			for k, u := range m {
				if u.Runs < 0 || u.Turns < 0 || u.Input < 0 || u.Output < 0 || u.Cached < 0 || !(u.Seconds >= 0) || !(u.CostUSD >= 0) {
					return nil, fmt.Errorf("%s: %s: a total is negative", s.path, k)
				}
			}
		}
	}
	if f.Largest < 0 {
		return nil, fmt.Errorf("%s: largestTurnTokens is negative", s.path)
	}
	if f.Days == nil {
		f.Days = map[string]Usage{}
	}
	if f.Weeks == nil {
		f.Weeks = map[string]Usage{}
	}
	return f, nil
}

// save writes f to a temporary file and renames it over the file: readers see the old file or
// the new one, whole. It returns the new file still open, for the caller to flush to the disk
// (Sync) once the lock is released, and close.
func (s *FileStore) save(f *storeFile) (*os.File, error) {
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return nil, err
	}
	b = append(b, '\n')
	tmp, err := os.CreateTemp(filepath.Dir(s.path), "."+filepath.Base(s.path)+".*.tmp")
	if err != nil {
		return nil, err
	}
	name := tmp.Name()
	_, err = tmp.Write(b)
	if err == nil {
		err = os.Rename(name, s.path)
	}
	if err != nil {
		tmp.Close()
		os.Remove(name)
		return nil, fmt.Errorf("writing %s: %w", s.path, err)
	}
	return tmp, nil
}

// prune keeps the newest n keys of m (its keys sort by time).
func prune(m map[string]Usage, n int) {
	if len(m) <= n {
		return
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys[:len(keys)-n] {
		delete(m, k)
	}
}

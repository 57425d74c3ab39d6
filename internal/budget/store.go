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

// Store is a budget file: the running totals of every run that shares it, per day and per
// week, in local time. It is JSON a person can read:
//
//	{"version":1,
//	 "days":{"2026-12-01":{"runs":3,"turns":41,"inputTokens":1830000,...}},
//	 "weeks":{"2026-W49":{...}}}
//
// Every update takes an exclusive lock (flock on FILE.lock, beside it), reads the file, adds,
// writes a temporary file in the same directory and renames it over the file: readers never
// see half a file and concurrent runs never lose each other's figures. The last 62 days and 53
// weeks are kept.
type Store struct {
	path string
}

// fileVersion is the version of the budget file's format.
const fileVersion = 1

const (
	keepDays  = 62
	keepWeeks = 53
)

type storeFile struct {
	Version int              `json:"version"`
	Days    map[string]Usage `json:"days"`
	Weeks   map[string]Usage `json:"weeks"`
}

// OpenStore returns the Store at path. The file need not exist; its directory must.
func OpenStore(path string) (*Store, error) {
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
	return &Store{path: path}, nil
}

// Name is the file's name as given.
func (s *Store) Name() string { return s.path }

// DayKey is the day t falls on, in local time: "2026-12-01".
func DayKey(t time.Time) string { return t.Local().Format("2006-01-02") }

// WeekKey is the ISO week t falls in, in local time: "2026-W49".
func WeekKey(t time.Time) string {
	y, w := t.Local().ISOWeek()
	return fmt.Sprintf("%04d-W%02d", y, w)
}

// Read returns the totals of the day and of the week now falls in.
func (s *Store) Read(now time.Time) (day, week Usage, err error) {
	return s.Add(now, Usage{})
}

// Add adds d to the totals of the day and of the week now falls in, and returns them. A zero
// d only reads (nothing is written).
func (s *Store) Add(now time.Time, d Usage) (day, week Usage, err error) {
	unlock, err := lockFile(s.path + ".lock")
	if err != nil {
		return Usage{}, Usage{}, fmt.Errorf("locking %s.lock: %w", s.path, err)
	}
	defer unlock()
	f, err := s.load()
	if err != nil {
		return Usage{}, Usage{}, err
	}
	dk, wk := DayKey(now), WeekKey(now)
	if d == (Usage{}) {
		return f.Days[dk], f.Weeks[wk], nil
	}
	f.Days[dk] = f.Days[dk].Add(d)
	f.Weeks[wk] = f.Weeks[wk].Add(d)
	prune(f.Days, keepDays)
	prune(f.Weeks, keepWeeks)
	if err := s.save(f); err != nil {
		return Usage{}, Usage{}, err
	}
	return f.Days[dk], f.Weeks[wk], nil
}

func (s *Store) load() (*storeFile, error) {
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
	if f.Days == nil {
		f.Days = map[string]Usage{}
	}
	if f.Weeks == nil {
		f.Weeks = map[string]Usage{}
	}
	return f, nil
}

func (s *Store) save(f *storeFile) error {
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	tmp, err := os.CreateTemp(filepath.Dir(s.path), "."+filepath.Base(s.path)+".*.tmp")
	if err != nil {
		return err
	}
	name := tmp.Name()
	_, err = tmp.Write(b)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(name, s.path)
	}
	if err != nil {
		os.Remove(name)
		return fmt.Errorf("writing %s: %w", s.path, err)
	}
	return nil
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

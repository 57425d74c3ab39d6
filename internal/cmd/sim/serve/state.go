package serve

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// savedState is what survives a daemon restart: unfinished tasks (in queue order, the running
// one first) and results their clients have not collected yet. It is written to stateFile in
// the state directory after every change, atomically.
type savedState struct {
	Tasks   []savedTask    `json:"tasks"`
	Results []*savedResult `json:"results"`
}

type savedTask struct {
	SessionID string  `json:"sessionId"`
	Task      string  `json:"task"`
	Owner     string  `json:"owner"` // client key: token scope and client id, or a connection
	ClientID  *string `json:"clientId"`
	Anonymous bool    `json:"anonymous"`
	Status    string  `json:"status"` // queued or running
	Step      int     `json:"step"`   // the step to resume from
	// Answers are the answers the prompts of that step were given, in order (null: nobody
	// answered): a restarted daemon gives them back instead of asking again.
	Answers []json.RawMessage `json:"answers,omitempty"`
}

type savedResult struct {
	Owner     string          `json:"owner"`
	ClientID  *string         `json:"clientId"`
	SessionID string          `json:"sessionId"`
	Event     json.RawMessage `json:"event"`

	queuedOn *conn // the connection it is queued on, not yet written
}

const stateFile = "serve-state.json"

func loadState(dir string) (savedState, error) {
	var st savedState
	b, err := os.ReadFile(filepath.Join(dir, stateFile))
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, err
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return st, errors.New("the saved state " + filepath.Join(dir, stateFile) + " is not valid: " + err.Error())
	}
	return st, nil
}

// writeFileAtomic writes b to path through a temporary file and a rename, so a reader (or a
// daemon restarted after a crash) never sees half a file.
func writeFileAtomic(path string, b []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}

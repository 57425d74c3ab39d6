//go:build unix

package stream

import (
	"strings"
	"testing"

	"github.com/fuseraft/fr/internal/testkit/screentest"
)

// In a chat a person can always answer: without flags fuseraft may ask, and the question
// reaches the person.
func TestScreenChatQuestionWithoutFlags(t *testing.T) {
	for _, cols := range []int{60, 120} {
		t.Run(map[int]string{60: "60", 120: "120"}[cols], func(t *testing.T) {
			t.Parallel()
			tm, record := chatOn(t, cols, false)
			tm.WaitLast("▶ chat", 1, "›")
			tm.Type("first\r")
			tm.WaitLast("", 0, "┃ allow? [y/N]")
			tm.Type("n\r")
			tm.WaitLast("— turn 0", 1, "›")
			tm.Type("release it\r")
			s := tm.WaitLast("dev", 1, "┃ answer 1-2 or your own (empty skips):")
			for _, want := range []string{"Which branch should the release go to?", "main", "dev"} {
				if !strings.Contains(s, want) {
					t.Errorf("the question does not show %q:\n%s", want, s)
				}
			}
			tm.Type("1\r")
			tm.WaitLast("On main.", 1, "›")
			if got := screentest.ReadFile(t, record); !strings.Contains(got, `{"type":"question_response","answer":"main"}`) {
				t.Errorf("fuseraft read:\n%s", got)
			}
			tm.Type("\x04")
			if code := tm.Exit(); code != 0 {
				t.Errorf("exit %d", code)
			}
		})
	}
}

// --no-questions keeps fuseraft from asking, even in a chat.
func TestScreenChatNoQuestions(t *testing.T) {
	tm, record := chatOn(t, 80, false, "--no-questions")
	tm.WaitLast("▶ chat", 1, "›")
	tm.Type("first\r")
	tm.WaitLast("", 0, "┃ allow? [y/N]")
	tm.Type("n\r")
	tm.WaitLast("— turn 0", 1, "›")
	tm.Type("release it\r")
	s := tm.WaitLast("— turn 1", 1, "›")
	if strings.Contains(s, "Which branch") {
		t.Errorf("a question was asked:\n%s", s)
	}
	if got := screentest.ReadFile(t, record); strings.Contains(got, "question_response") {
		t.Errorf("fuseraft read:\n%s", got)
	}
	tm.Type("\x04")
	if code := tm.Exit(); code != 0 {
		t.Errorf("exit %d", code)
	}
}

package approvalprompt

import "testing"

func TestRead(t *testing.T) {
	for _, c := range []struct {
		typed string
		want  Answer
	}{
		{"y", Allow}, {"Y", Allow}, {"yes", Allow}, {" YES \r", Allow},
		{"", Deny}, {"  ", Deny}, {"n", Deny}, {"No", Deny},
		{"d", Diff}, {"diff", Diff}, {"D", Diff},
		// anything else answers nothing: asked again
		{"yse", Unknown}, {"sure", Unknown}, {"ok", Unknown}, {"y y", Unknown}, {"nope", Unknown},
		{"deploy the app", Unknown}, {"1", Unknown},
	} {
		if got := Read(c.typed); got != c.want {
			t.Errorf("Read(%q) = %v, want %v", c.typed, got, c.want)
		}
	}
}

// The answers fr-attach took before the two commands shared this: the same still.
func TestReadAsBefore(t *testing.T) {
	allow := []string{"y", "yes", "Y", "YES", "Yes", " y ", "yes\r"}
	deny := []string{"", " ", "\r", "n", "no", "N", "NO", "No", " n ", "no\r"}
	neither := []string{"yep", "yes please", "nope", "1", "0", "ja", "ok", "true", "allow", "deny",
		"y y", "second task", `{"type":"approval_response","approved":true}`}
	for _, in := range allow {
		if got := Read(in); got != Allow {
			t.Errorf("Read(%q) = %v, want Allow", in, got)
		}
	}
	for _, in := range deny {
		if got := Read(in); got != Deny {
			t.Errorf("Read(%q) = %v, want Deny", in, got)
		}
	}
	for _, in := range neither {
		if got := Read(in); got != Unknown {
			t.Errorf("Read(%q) = %v, want Unknown", in, got)
		}
	}
}

func TestOutcome(t *testing.T) {
	if Outcome(true) != "✓ approved" || Outcome(false) != "✗ denied" {
		t.Errorf("Outcome: %q, %q", Outcome(true), Outcome(false))
	}
}

// Package approvalprompt is what a person is asked at an approval, and how their answer is read: the
// same in every command that asks (fr-approve on its terminal, fr-attach at its input line).
//
// The question is "allow? [y/N] ". y or yes allows; n, no or an empty line denies; d or diff
// shows a file write's whole diff where the command can (and the question is asked again);
// anything else answers nothing, and the question is asked again with Hint. Case and the
// spaces around an answer do not matter. Once answered, Outcome says what was decided.
package approvalprompt

import "strings"

// Approval is the question, with the space the answer is typed after.
const Approval = "allow? [y/N] "

// Hint is said when an answer is neither yes nor no.
const Hint = "answer y or n (an empty line is no)"

// Answer is what a typed line says.
type Answer int

const (
	// Unknown is anything but the answers below: ask again.
	Unknown Answer = iota
	// Allow is y or yes.
	Allow
	// Deny is n, no or an empty line.
	Deny
	// Diff is d or diff: show the whole diff of a file write, then ask again.
	Diff
)

// Read reads a typed line.
func Read(typed string) Answer {
	switch strings.ToLower(strings.TrimSpace(typed)) {
	case "y", "yes":
		return Allow
	case "", "n", "no":
		return Deny
	case "d", "diff":
		return Diff
	}
	return Unknown
}

// Outcome is what is shown once an approval is answered: "✓ approved" or "✗ denied".
func Outcome(allow bool) string {
	if allow {
		return "✓ approved"
	}
	return "✗ denied"
}

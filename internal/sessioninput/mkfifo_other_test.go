//go:build !unix

package sessioninput

import "testing"

func mkfifo(t *testing.T) string {
	t.Skip("no named pipes here")
	return ""
}

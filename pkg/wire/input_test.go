package wire

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/fuseraft/fr/internal/testkit"
)

func TestUserInputChecksEveryImage(t *testing.T) {
	testkit.WithoutRace(t)
	dataURL := func(mime string, b []byte) string {
		return "data:" + mime + ";base64," + base64.StdEncoding.EncodeToString(b)
	}
	// Exactly MaxImageSize decoded bytes passes; one more does not.
	atLimit := append(append([]byte{}, pngBytes...), make([]byte, MaxImageSize-len(pngBytes))...)
	overLimit := append(atLimit, 0)
	good, err := NewImage("good.png", pngBytes)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		img  Image
		want string // substring of the error; "" for none
	}{
		{"from NewImage", good, ""},
		{"hand-built JPEG", Image{"a.jpg", dataURL("image/jpeg", jpegBytes)}, ""},
		{"hand-built WebP, type in capitals", Image{"a.webp", dataURL("IMAGE/WEBP", webpBytes)}, ""},
		{"at the size limit", Image{"big.png", dataURL("image/png", atLimit)}, ""},
		{"over the size limit", Image{"huge.png", dataURL("image/png", overLimit)}, `"huge.png" is 20971521 bytes; the limit is 20 MB`},
		{"far over the size limit", Image{"huger.png", dataURL("image/png", append(overLimit, make([]byte, 64)...))}, `"huger.png" is at least 20971585 bytes; the limit is 20 MB`},
		{"bare base64, no data URL", Image{"raw.png", base64.StdEncoding.EncodeToString(pngBytes)}, `"raw.png": data is not a base64 data URL`},
		{"data URL not base64", Image{"plain.png", "data:image/png," + string(pngBytes)}, `"plain.png": data is not a base64 data URL`},
		{"empty data", Image{"empty.png", ""}, `"empty.png": data is not a base64 data URL`},
		{"type not accepted", Image{"a.bmp", dataURL("image/bmp", pngBytes)}, `"a.bmp": data URL type "image/bmp"`},
		{"bytes are not an image", Image{"notes.png", dataURL("image/png", []byte("hello"))}, `"notes.png" is text/plain; charset=utf-8; only PNG, JPEG, GIF and WebP`},
		{"bad base64", Image{"broken.gif", "data:image/gif;base64,R0lG!!"}, `"broken.gif": data URL is not valid base64`},
		{"no bytes", Image{"none.png", "data:image/png;base64,"}, `"none.png" is text/plain`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := UserInput("look", good, tt.img)
			if tt.want == "" {
				if err != nil || len(b) == 0 {
					t.Fatalf("rejected: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("accepted, want an error with %q", tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "image 2 of 2: ") {
				t.Errorf("error %q, want %q after %q", err, tt.want, "image 2 of 2: ")
			}
		})
	}
	// NewImage and UserInput share the check: NewImage refuses what UserInput would.
	if _, err := NewImage("huge.png", overLimit); err == nil || !strings.Contains(err.Error(), "the limit is 20 MB") {
		t.Errorf("NewImage over the limit: %v", err)
	}
	if _, err := NewImage("at.png", atLimit); err != nil {
		t.Errorf("NewImage at the limit: %v", err)
	}
}

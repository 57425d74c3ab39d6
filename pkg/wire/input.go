package wire

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// Limits on images in user_input (fuseraft checks them too and answers with a warning event).
// MaxImageSize applies to an image's decoded bytes, not to its data URL.
const (
	MaxImages    = 8
	MaxImageSize = 20 << 20
)

// Image is one image attached to a user_input: Data is a base64 data URL
// ("data:image/png;base64,..."). NewImage builds one; UserInput checks every image it is given,
// however it was built.
type Image struct {
	Name string `json:"name"`
	Data string `json:"data"`
}

// imageTypes are the formats fuseraft accepts, as sniffed from the bytes.
var imageTypes = map[string]bool{"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true}

// checkImageBytes is the one check of an image's decoded bytes: at most MaxImageSize of them,
// and a format fuseraft accepts. It returns the sniffed MIME type.
func checkImageBytes(name string, data []byte) (string, error) {
	if len(data) > MaxImageSize {
		return "", fmt.Errorf("image %q is %d bytes; the limit is %d MB", name, len(data), MaxImageSize>>20)
	}
	ct := http.DetectContentType(data)
	if !imageTypes[ct] {
		return "", fmt.Errorf("image %q is %s; only PNG, JPEG, GIF and WebP are accepted", name, ct)
	}
	return ct, nil
}

// check reports whether img is what fuseraft accepts: a base64 data URL of an image type it
// takes, whose decoded bytes pass checkImageBytes.
func (img Image) check() error {
	const prefix = "data:"
	meta, payload, ok := strings.Cut(img.Data, ",")
	if !ok || !strings.HasPrefix(meta, prefix) || !strings.HasSuffix(meta, ";base64") {
		return fmt.Errorf("image %q: data is not a base64 data URL (data:<type>;base64,...)", img.Name)
	}
	if declared := strings.TrimSuffix(strings.TrimPrefix(meta, prefix), ";base64"); !imageTypes[strings.ToLower(declared)] {
		return fmt.Errorf("image %q: data URL type %q; only PNG, JPEG, GIF and WebP are accepted", img.Name, declared)
	}
	// Refuse an oversized payload before decoding it: it holds at least this many bytes.
	if n := len(payload)/4*3 - 2; n > MaxImageSize {
		return fmt.Errorf("image %q is at least %d bytes; the limit is %d MB", img.Name, n, MaxImageSize>>20)
	}
	data, err := base64.StdEncoding.DecodeString(payload)
	if err != nil {
		return fmt.Errorf("image %q: data URL is not valid base64: %v", img.Name, err)
	}
	_, err = checkImageBytes(img.Name, data)
	return err
}

// NewImage builds an Image from a file's bytes, sniffing its type. Only PNG, JPEG, GIF and WebP
// up to MaxImageSize bytes are accepted.
func NewImage(name string, data []byte) (Image, error) {
	ct, err := checkImageBytes(name, data)
	if err != nil {
		return Image{}, err
	}
	return Image{Name: name, Data: "data:" + ct + ";base64," + base64.StdEncoding.EncodeToString(data)}, nil
}

type userInput struct {
	Type   string  `json:"type"`
	Text   string  `json:"text"`
	Images []Image `json:"images,omitempty"`
}

// UserInput encodes a user_input line: a message or a slash command. At most MaxImages images
// may be attached (not on the serve socket, which does not take them), each held to the same
// rules as NewImage: a base64 data URL of PNG, JPEG, GIF or WebP bytes, at most MaxImageSize of
// them once decoded. The error for a rejected image names it.
func UserInput(text string, images ...Image) ([]byte, error) {
	if len(images) > MaxImages {
		return nil, fmt.Errorf("%d images attached; the limit is %d", len(images), MaxImages)
	}
	for i, img := range images {
		if err := img.check(); err != nil {
			return nil, fmt.Errorf("image %d of %d: %w", i+1, len(images), err)
		}
	}
	return json.Marshal(userInput{Type: TypeUserInput, Text: text, Images: images})
}

// ApprovalResponse encodes the answer to the pending approval_request.
func ApprovalResponse(approved bool) []byte {
	if approved {
		return []byte(`{"type":"approval_response","approved":true}`)
	}
	return []byte(`{"type":"approval_response","approved":false}`)
}

// QuestionResponse encodes the answer to the pending question; nil skips it.
func QuestionResponse(answer *string) []byte {
	b, _ := json.Marshal(struct {
		Type   string  `json:"type"`
		Answer *string `json:"answer"`
	}{TypeQuestionResponse, answer})
	return b
}

// Interrupt encodes an interrupt line, which cancels the running turn.
func Interrupt() []byte { return []byte(`{"type":"interrupt"}`) }

package wire

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
)

// Limits on images in user_input (fuseraft checks them too and answers with a warning event).
const (
	MaxImages    = 8
	MaxImageSize = 20 << 20
)

// Image is one image attached to a user_input: Data is a base64 data URL.
type Image struct {
	Name string `json:"name"`
	Data string `json:"data"`
}

// imageTypes are the formats fuseraft accepts, as sniffed from the bytes.
var imageTypes = map[string]bool{"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true}

// NewImage builds an Image from a file's bytes, sniffing its type. Only PNG, JPEG, GIF and WebP
// up to MaxImageSize bytes are accepted.
func NewImage(name string, data []byte) (Image, error) {
	if len(data) > MaxImageSize {
		return Image{}, fmt.Errorf("image %s is %d bytes; the limit is %d MB", name, len(data), MaxImageSize>>20)
	}
	ct := http.DetectContentType(data)
	if !imageTypes[ct] {
		return Image{}, fmt.Errorf("image %s is %s; only PNG, JPEG, GIF and WebP are accepted", name, ct)
	}
	return Image{Name: name, Data: "data:" + ct + ";base64," + base64.StdEncoding.EncodeToString(data)}, nil
}

type userInput struct {
	Type   string  `json:"type"`
	Text   string  `json:"text"`
	Images []Image `json:"images,omitempty"`
}

// UserInput encodes a user_input line: a message or a slash command. At most MaxImages images
// may be attached (not on the serve socket, which does not take them).
func UserInput(text string, images ...Image) ([]byte, error) {
	if len(images) > MaxImages {
		return nil, fmt.Errorf("%d images attached; the limit is %d", len(images), MaxImages)
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

package sim

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/fuseraft/fr/pkg/wire"
)

var imageTypes = map[string]bool{"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true}

// imageWarnings checks a user_input's images as fuseraft does (at most 8, 20 MB each, PNG,
// JPEG, GIF or WebP sniffed from the bytes) and returns a warning for each one it rejects.
func imageWarnings(line []byte) []string {
	var in struct {
		Images []struct {
			Name string `json:"name"`
			Data string `json:"data"`
		} `json:"images"`
	}
	if json.Unmarshal(line, &in) != nil || len(in.Images) == 0 {
		return nil
	}
	var warn []string
	imgs := in.Images
	if len(imgs) > wire.MaxImages {
		warn = append(warn, fmt.Sprintf("At most %d images can be attached to a message; %d were ignored.", wire.MaxImages, len(imgs)-wire.MaxImages))
		imgs = imgs[:wire.MaxImages]
	}
	for _, im := range imgs {
		data := im.Data
		if i := strings.Index(data, ";base64,"); strings.HasPrefix(data, "data:") && i >= 0 {
			data = data[i+len(";base64,"):]
		} else {
			warn = append(warn, fmt.Sprintf("Image %s was ignored: data is not a base64 data URL.", im.Name))
			continue
		}
		b, err := base64.StdEncoding.DecodeString(data)
		switch {
		case err != nil:
			warn = append(warn, fmt.Sprintf("Image %s was ignored: its base64 data is invalid.", im.Name))
		case len(b) > wire.MaxImageSize:
			warn = append(warn, fmt.Sprintf("Image %s was ignored: it is larger than %d MB.", im.Name, wire.MaxImageSize>>20))
		case !imageTypes[http.DetectContentType(b)]:
			warn = append(warn, fmt.Sprintf("Image %s was ignored: only PNG, JPEG, GIF and WebP are supported.", im.Name))
		}
	}
	return warn
}

package tokens

import "fmt"

// CalibratedName is the name of [Calibrated] in a manifest.
const CalibratedName = "calibrated"

// Builtin returns a new tokenizer of the core for the manifest's tokenizer
// name: a [Calibrated] for "calibrated". The exact tokenizers are not in the
// core: for "o200k_base" and "cl100k_base" the error says where they are,
// and for any other name that it is unknown.
func Builtin(name string) (Tokenizer, error) {
	switch name {
	case CalibratedName:
		return NewCalibrated(), nil
	case "o200k_base", "cl100k_base":
		return nil, fmt.Errorf("tokenizer %q is not built into the core module: "+
			"tiktoken.New(%q) from module github.com/toolcap/toolcap/tiktoken counts with it", name, name)
	}
	return nil, fmt.Errorf("unknown tokenizer %q (want \"calibrated\", \"o200k_base\" or \"cl100k_base\")", name)
}

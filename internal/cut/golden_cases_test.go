package cut_test

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// goldenInputs are the inputs of TestHeadGolden: every alphabet at limits
// around the marker's size and around the digit changes of N, invalid
// bytes, and lengths on either side of the limit.
func goldenInputs() []goldenCase {
	units := []string{
		"The quick brown fox jumps over the lazy dog.\n",
		"敏捷的棕色狐狸跳过了懒狗。\n",
		"🦊🐕🌍🚀🔥✨📦🧪🎯🧵\n",
		"a\xff\xfe\xc3b\xe2\x82",
		"ok 1\nok 2\nFAIL: TestX\n",
	}
	limits := []int{-1, 0, 1, 10, 48, 49, 50, 51, 60, 128, 200, 1000, 2000, 16384}
	lengths := []int{0, 1, 49, 50, 100, 251, 2949, 2950, 20000, 130000}
	var cs []goldenCase
	for ui, u := range units {
		for _, l := range limits {
			for _, n := range lengths {
				cs = append(cs, goldenCase{Unit: ui, Len: n, Limit: l, content: strings.Repeat(u, n/len(u)+1)[:n]})
			}
		}
	}
	return cs
}

type goldenCase struct {
	Unit    int    `json:"unit"`
	Len     int    `json:"len"`
	Limit   int    `json:"limit"`
	Out     int    `json:"out_len"`
	Dropped int    `json:"dropped"`
	SHA256  string `json:"sha256"`
	content string
}

func digest(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:8])
}

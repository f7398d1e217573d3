module github.com/toolcap/toolcap/tiktoken

go 1.26.0

require (
	github.com/google/go-cmp v0.7.0
	github.com/tiktoken-go/tokenizer v0.10.0
	github.com/toolcap/toolcap v0.0.0
)

require github.com/dlclark/regexp2/v2 v2.5.1 // indirect

replace github.com/toolcap/toolcap => ..

package manifest

// Names the black-box tests of this package check against, not exported
// by the package itself.
const (
	MaxNestingDepth     = maxNestingDepth
	MaxTableKeys        = maxTableKeys
	MaxPerToolEntries   = maxPerToolEntries
	MaxKeepRecent       = maxKeepRecent
	MinMaxTokens        = minMaxTokens
	MaxMaxTokens        = maxMaxTokens
	TokenizerCalibrated = tokenizerCalibrated
	TokenizerO200k      = tokenizerO200k
	TokenizerCl100k     = tokenizerCl100k
	DefaultRestTool     = defaultRestTool
	MaxRestBytes        = maxRestBytes
	MaxRestTTL          = maxRestTTL
)

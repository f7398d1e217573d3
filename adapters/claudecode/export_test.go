package claudecode

// Unquote is unquote, for the black-box tests that hold it to
// encoding/json.
var Unquote = unquote

// ReadBounded is readBounded, for a test of the bound that need not read
// MaxPayload bytes.
var ReadBounded = readBounded

package mcpproxy

// IDKey exposes idKey to the black-box tests.
var IDKey = idKey

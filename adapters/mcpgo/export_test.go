package mcpgo

// Blocks is blocks, for the black-box tests of this package.
var Blocks = blocks

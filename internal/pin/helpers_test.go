package pin_test

import (
	"context"

	"github.com/toolcap/toolcap/chain"
)

func ptr(s string) *string { return &s }

// returning is a handler that answers every call with res.
func returning(res chain.Result) chain.Handler {
	return func(context.Context, chain.Call) chain.Result { return res }
}

package tokens

// Names the black-box tests of this package check against, not exported
// by the package itself.
const (
	CalibratedMargin = calibratedMargin
	CalibratedWindow = calibratedWindow
)

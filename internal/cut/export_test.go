package cut

// RecordsAll reports whether a head_tail Writer at limit with spec's
// KeepLines keeps every line a cut at a smaller limit may rescue: whether
// the lineRecorder's rule, run over s, never stops for good. A spec
// without KeepLines records nothing and needs nothing. It lets the
// black-box tests know when Writer.ResultAt must be Cut's exactly.
func RecordsAll(s string, limit int, spec Spec) bool {
	if len(spec.KeepLines) == 0 || limit <= 0 {
		return true
	}
	return !recordLines(s, limit, spec.KeepLines).closed
}

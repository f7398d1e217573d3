package mcpproxy

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
)

// learnTools takes the tool names (and output schemas) from a tools/list
// result; a listing that is complete replaces the proxy's list. It reports
// whether raw is the listing's last page (no nextCursor).
func (s *session) learnTools(raw []byte, continued bool) bool {
	var resp struct {
		Result struct {
			Tools []struct {
				Name         string          `json:"name"`
				InputSchema  json.RawMessage `json:"inputSchema"`
				OutputSchema json.RawMessage `json:"outputSchema"`
			} `json:"tools"`
			NextCursor string `json:"nextCursor"`
		} `json:"result"`
	}
	if err := json.Unmarshal(raw, &resp); err != nil {
		s.p.logger.Debug("could not read the tools of a tools/list result", "error", err)
		return false
	}
	s.mu.Lock()
	if !continued {
		s.listing, s.schemas = nil, map[string]json.RawMessage{}
	}
	for _, t := range resp.Result.Tools {
		s.p.setParamBindings(t.Name, paramBindings(t.InputSchema))
		s.listing = append(s.listing, t.Name)
		if len(t.OutputSchema) > 0 && !bytes.Equal(t.OutputSchema, []byte("null")) {
			s.schemas[t.Name] = t.OutputSchema
		}
	}
	done := resp.Result.NextCursor == ""
	names, schemas := s.listing, s.schemas
	s.mu.Unlock()
	if done {
		s.p.setTools(slices.Clone(names), maps.Clone(schemas))
	}
	return done
}

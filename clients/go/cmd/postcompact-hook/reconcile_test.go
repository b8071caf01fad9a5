package main

import (
	"strings"
	"testing"
)

func TestSweepTranscript(t *testing.T) {
	lines := []string{
		`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"old","name":"Read","input":{"file_path":"/p/old"}}]}}`,
		`{"type":"user","timestamp":"2026-12-05T05:15:57.805Z","toolUseResult":{"type":"text","file":{}},"message":{"content":[{"type":"tool_result","tool_use_id":"old"}]}}`,
		`{"type":"system","subtype":"compact_boundary"}`,
		`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"r1","name":"Read","input":{"file_path":"/p/a"}},{"type":"tool_use","id":"b1","name":"Bash","input":{}}]}}`,
		`{"type":"user","timestamp":"2026-12-05T05:15:58.000Z","toolUseResult":{"type":"text","file":{"filePath":"/p/a","content":"a\n"}},"message":{"content":[{"type":"tool_result","tool_use_id":"r1"}]}}`,
		`{"type":"user","toolUseResult":{},"message":{"content":[{"type":"tool_result","tool_use_id":"b1"}]}}`,
		`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"e1","name":"Edit","input":{"file_path":"/p/a"}}]}}`,
		`{"type":"user","toolUseResult":"Error: String to replace not found","message":{"content":[{"type":"tool_result","tool_use_id":"e1","is_error":true}]}}`,
		`{"type":"assistant","isSidechain":true,"message":{"content":[{"type":"tool_use","id":"s1","name":"Read","input":{}}]}}`,
		`not json`,
		`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"k1","name":"Skill","input":{"skill":"demo"}}]}}`,
		`{"type":"user","timestamp":"2026-12-05T05:16:00.500Z","toolUseResult":{"success":true,"commandName":"demo"},"message":{"content":[{"type":"tool_result","tool_use_id":"k1"}]}}`,
		`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"w1","name":"Write","input":{"file_path":"/p/n"}}]}}`,
	} // w1 has no result yet: not done
	uses, err := SweepTranscript(strings.NewReader(strings.Join(lines, "\n")))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, u := range uses {
		ids = append(ids, u.ID)
	}
	if strings.Join(ids, ",") != "r1,k1" {
		t.Fatalf("swept %v, want r1,k1", ids)
	}
	if uses[0].AtMS != 1_796_447_758_000 || uses[0].Name != "Read" || !strings.Contains(string(uses[0].Response), `"content":"a\n"`) {
		t.Fatalf("r1: %+v", uses[0])
	}
}

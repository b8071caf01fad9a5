package main

import (
	"fmt"
	"os"
	"path/filepath"
)

const maxLog = 1 << 20

// logf appends a line to the hook's log (hook.log in the state directory): Claude Code shows
// no output of a hook that exits 0, and the hook always does. The log starts again past 1 MiB.
func logf(st *State, format string, args ...any) {
	path := filepath.Join(st.Dir, "hook.log")
	if os.MkdirAll(st.Dir, 0o700) != nil {
		return
	}
	if info, err := os.Stat(path); err == nil && info.Size() > maxLog {
		os.Rename(path, path+".1")
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintf(f, "%s pid %d: %s\n", st.Now().UTC().Format("2006-01-02T15:04:05.000Z"), os.Getpid(), fmt.Sprintf(format, args...))
}

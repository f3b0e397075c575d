package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// A batch's journal (docs/behaviour.md#batch-journal): a directory of
// files, each written whole to a temporary file, synced, renamed over its
// name and the directory synced, so a reader finds either the old content
// or the new, never a part.
//
//	batch.json      the batch: the journal's version, the flags as given,
//	                the directory it ran in, the TASKS file's directory
//	tasks.jsonl     the TASKS file, copied
//	task-N.json     task N's record (N: its place among the tasks, from 1);
//	                no file: the task was not started

// journalVersion is the format batch.json says.
const journalVersion = 1

// Files of a journal.
const (
	journalMetaFile  = "batch.json"
	journalTasksFile = "tasks.jsonl"
	journalLockFile  = "lock"
)

// Task states a record says.
const (
	// journalStarting: the task's holder may be started; no prompt was
	// sent.
	journalStarting = "starting"
	// journalRunning: prompt Turn was recorded before it was sent.
	journalRunning = "running"
	// journalFinished: Line is the task's task_result line.
	journalFinished = "finished"
)

// journalMeta is batch.json.
type journalMeta struct {
	Version int `json:"version"`
	// Args are the batch's flags as given, its TASKS file left out.
	Args []string `json:"args"`
	// Cwd is the directory the batch ran in; TasksDir the TASKS file's
	// (a task's relative paths resolve against it).
	Cwd      string `json:"cwd"`
	TasksDir string `json:"tasks_dir"`
}

// journalTask is one task's record.
type journalTask struct {
	ID    string `json:"id"`
	State string `json:"state"`
	// HolderDir and HolderPID name the task's holder once started.
	HolderDir string `json:"holder_dir,omitempty"`
	HolderPID int    `json:"holder_pid,omitempty"`
	// SessionRef is the held session's reference, SessionID its id.
	SessionRef string `json:"session_ref,omitempty"`
	SessionID  string `json:"session_id,omitempty"`
	// Turn is the last prompt recorded as sent (from 1), 0 before any.
	Turn int `json:"turn"`
	// TurnResults are the task's turns that ended, in order.
	TurnResults []turnResultLine `json:"turn_results"`
	// Line is the task's task_result line, once finished.
	Line *batchLine `json:"line,omitempty"`
}

// batchJournal is an open journal.
type batchJournal struct {
	dir   string
	meta  journalMeta
	index map[string]int // task id → its place, from 1

	mu   sync.Mutex // serialises the writes
	lock *os.File   // holds the journal's lock while the batch runs
}

// createJournal makes a new journal in dir (made 0700 when missing) for
// the batch of args over the TASKS file tasksPath. A directory already
// holding a journal is refused: it is resumed with --resume.
func createJournal(dir string, args []string, tasksPath string, tasks []batchTask) (*batchJournal, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	lock, err := takeLock(dir)
	if err != nil {
		return nil, err
	}
	j, err := newJournal(dir, lock, args, tasksPath, tasks)
	if err != nil {
		_ = lock.Close()
	}
	return j, err
}

// newJournal writes a new journal's files, its lock taken.
func newJournal(dir string, lock *os.File, args []string, tasksPath string, tasks []batchTask) (*batchJournal, error) {
	if _, err := os.Stat(filepath.Join(dir, journalMetaFile)); err == nil {
		return nil, fmt.Errorf("--journal %s already holds a batch's journal: resume it with --resume %s, or name another directory", dir, dir)
	}
	cwd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	tasksDir, err := filepath.Abs(filepath.Dir(tasksPath))
	if err != nil {
		return nil, err
	}
	raw, err := os.ReadFile(tasksPath)
	if err != nil {
		return nil, err
	}
	if err := writeAtomic(dir, journalTasksFile, raw); err != nil {
		return nil, err
	}
	j := &batchJournal{dir: dir, lock: lock, meta: journalMeta{Version: journalVersion, Args: args, Cwd: cwd, TasksDir: tasksDir}}
	meta, err := json.Marshal(j.meta)
	if err != nil {
		return nil, err
	}
	// batch.json last: a journal without it is not one.
	if err := writeAtomic(dir, journalMetaFile, meta); err != nil {
		return nil, err
	}
	j.indexTasks(tasks)
	return j, nil
}

// openJournal reads the journal of dir for --resume.
func openJournal(dir string) (*batchJournal, error) {
	raw, err := os.ReadFile(filepath.Join(dir, journalMetaFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("--resume %s: no batch's journal there (%s is missing)", dir, journalMetaFile)
	}
	if err != nil {
		return nil, err
	}
	j := &batchJournal{dir: dir}
	if err := json.Unmarshal(raw, &j.meta); err != nil {
		return nil, fmt.Errorf("--resume %s: %s: %v", dir, journalMetaFile, err)
	}
	if j.meta.Version != journalVersion {
		return nil, fmt.Errorf("--resume %s: journal version %d, this acpdrive reads %d", dir, j.meta.Version, journalVersion)
	}
	if j.lock, err = takeLock(dir); err != nil {
		return nil, fmt.Errorf("--resume %s: %w", dir, err)
	}
	return j, nil
}

// takeLock opens the journal's lock file and takes its lock: one batch
// at a time runs a journal's tasks (a second would take over their held
// sessions).
func takeLock(dir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, journalLockFile), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := lockFile(f); err != nil {
		_ = f.Close()
		return nil, err
	}
	return f, nil
}

// close releases the journal's lock.
func (j *batchJournal) close() {
	if j != nil && j.lock != nil {
		_ = j.lock.Close()
	}
}

// tasksPath is the journal's copy of the TASKS file.
func (j *batchJournal) tasksPath() string { return filepath.Join(j.dir, journalTasksFile) }

// indexTasks numbers the tasks as the TASKS file orders them.
func (j *batchJournal) indexTasks(tasks []batchTask) {
	j.index = make(map[string]int, len(tasks))
	for i, t := range tasks {
		j.index[t.ID] = i + 1
	}
}

// fileOf is the record file of the task id.
func (j *batchJournal) fileOf(id string) string { return fmt.Sprintf("task-%d.json", j.index[id]) }

// read is the task's record; false when it has none (never started).
func (j *batchJournal) read(id string) (journalTask, bool, error) {
	raw, err := os.ReadFile(filepath.Join(j.dir, j.fileOf(id)))
	if errors.Is(err, fs.ErrNotExist) {
		return journalTask{}, false, nil
	}
	if err != nil {
		return journalTask{}, false, err
	}
	var rec journalTask
	if err := json.Unmarshal(raw, &rec); err != nil {
		return journalTask{}, false, fmt.Errorf("the journal's %s: %v", j.fileOf(id), err)
	}
	if rec.ID != id {
		return journalTask{}, false, fmt.Errorf("the journal's %s names task %q, not %q", j.fileOf(id), rec.ID, id)
	}
	return rec, true, nil
}

// write replaces the task's record, durably, before returning.
func (j *batchJournal) write(rec journalTask) error {
	if rec.TurnResults == nil {
		rec.TurnResults = []turnResultLine{}
	}
	raw, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	return writeAtomic(j.dir, j.fileOf(rec.ID), raw)
}

// writeAtomic writes data as dir/name: a temporary file of dir, synced,
// renamed over name, then dir synced.
func writeAtomic(dir, name string, data []byte) error {
	tmp, err := os.CreateTemp(dir, "."+name+".*")
	if err != nil {
		return err
	}
	done := false
	defer func() {
		if !done {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), filepath.Join(dir, name)); err != nil {
		return err
	}
	done = true
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

package state

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"
)

// TestTasks: a task belongs to its agent (another agent's is the same as
// an unknown one), updates wake a poller on another replica, a finished
// task cannot change, and expired tasks are pruned.
func TestTasks(t *testing.T) {
	t.Parallel()
	forBackends(t, func(t *testing.T, open func(testing.TB) Store) {
		a, b := open(t), open(t)
		ctx := context.Background()
		task, err := a.CreateTask(ctx, Task{Agent: "reader", Surface: "git", Action: "command:call:git:push", ArgsSHA256: "d", Revision: "r1",
			ApprovalID: "ap-1", DownstreamServer: "memory"}, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if len(task.ID) != 3+32 || task.Status != TaskWorking {
			t.Errorf("created %+v: want a 128-bit id and status working", task)
		}
		for _, probe := range []struct{ agent, id string }{{"intruder", task.ID}, {"reader", "tk-00000000000000000000000000000000"}} {
			if _, err := b.GetTask(ctx, probe.agent, probe.id); !errors.Is(err, ErrNoTask) {
				t.Errorf("get %+v: %v, want ErrNoTask", probe, err)
			}
			if _, err := b.UpdateTask(ctx, probe.agent, probe.id, TaskUpdate{Status: TaskCompleted}); !errors.Is(err, ErrNoTask) {
				t.Errorf("update %+v: %v, want ErrNoTask", probe, err)
			}
			if _, err := b.CancelTask(ctx, probe.agent, probe.id, ""); !errors.Is(err, ErrNoTask) {
				t.Errorf("cancel %+v: %v, want ErrNoTask", probe, err)
			}
		}
		if list, err := b.ListTasks(ctx, "intruder"); err != nil || len(list) != 0 {
			t.Errorf("another agent lists %v %v", list, err)
		}
		changed, stop := b.WatchTasks()
		defer stop()
		if _, err := a.UpdateTask(ctx, "reader", task.ID, TaskUpdate{Status: TaskCompleted, Result: json.RawMessage(`{"content":[]}`), StatusMessage: "done"}); err != nil {
			t.Fatal(err)
		}
		select {
		case <-changed:
		case <-time.After(20 * time.Second):
			t.Fatal("no wake-up on the other replica after a task update")
		}
		got, err := b.GetTask(ctx, "reader", task.ID)
		if err != nil || got.Status != TaskCompleted || string(got.Result) != `{"content":[]}` || got.StatusMessage != "done" || got.DownstreamServer != "memory" {
			t.Errorf("read back %+v %v", got, err)
		}
		if _, err := b.CancelTask(ctx, "reader", task.ID, "too late"); !errors.Is(err, ErrTaskFinal) {
			t.Errorf("cancel a completed task: %v, want ErrTaskFinal", err)
		}
		if _, err := a.UpdateTask(ctx, "reader", task.ID, TaskUpdate{Status: "bogus"}); err == nil {
			t.Error("an unknown status was accepted")
		}
		if _, err := a.UpdateTask(ctx, "reader", task.ID, TaskUpdate{Result: json.RawMessage(`{`)}); err == nil {
			t.Error("a result that is not JSON was accepted")
		}
		short, err := a.CreateTask(ctx, Task{Agent: "reader", Surface: "git", Action: "x"}, time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		c, err := a.CreateTask(ctx, Task{Agent: "reader", Surface: "git", Action: "y"}, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if ct, err := b.CancelTask(ctx, "reader", c.ID, "user stopped"); err != nil || ct.Status != TaskCancelled {
			t.Errorf("cancel: %+v %v", ct, err)
		}
		n, err := b.PruneTasks(ctx, time.Now().Add(time.Second))
		if err != nil || n != 1 {
			t.Errorf("pruned %d (%v), want the one expired task", n, err)
		}
		if _, err := a.GetTask(ctx, "reader", short.ID); !errors.Is(err, ErrNoTask) {
			t.Errorf("expired task still readable: %v", err)
		}
		list, err := a.ListTasks(ctx, "reader")
		if err != nil || len(list) != 2 || list[0].ID != c.ID {
			t.Errorf("list = %+v %v, want the two live tasks newest first", list, err)
		}
	})
}

// TestJobs: a job record written by the process running it is seen by
// another; another agent cannot read or overwrite it.
func TestJobs(t *testing.T) {
	t.Parallel()
	forBackends(t, func(t *testing.T, open func(testing.TB) Store) {
		a, b := open(t), open(t)
		ctx := context.Background()
		start := time.Now().UTC().Truncate(time.Microsecond)
		j := Job{ID: "job-1", Agent: "reader", Surface: "build", Command: "make", State: "running", Started: start}
		if err := a.PutJob(ctx, j); err != nil {
			t.Fatal(err)
		}
		exit := 2
		j.State, j.Exit, j.Ended, j.Error = "failed", &exit, start.Add(time.Second), "exit status 2"
		if err := a.PutJob(ctx, j); err != nil {
			t.Fatal(err)
		}
		if err := b.PutJob(ctx, Job{ID: "job-1", Agent: "intruder", State: "succeeded", Started: start}); err != nil {
			t.Fatal(err)
		}
		got, err := b.GetJob(ctx, "reader", "job-1")
		if err != nil || got.State != "failed" || got.Exit == nil || *got.Exit != 2 || !got.Ended.Equal(j.Ended) || got.Error != "exit status 2" || !got.Started.Equal(start) {
			t.Errorf("job seen from the other process: %+v %v", got, err)
		}
		if _, err := b.GetJob(ctx, "intruder", "job-1"); !errors.Is(err, ErrNoJob) {
			t.Errorf("another agent's job: %v, want ErrNoJob", err)
		}
		if list, err := b.ListJobs(ctx, "reader"); err != nil || len(list) != 1 {
			t.Errorf("list %v %v", list, err)
		}
		if n, err := b.PruneJobs(ctx, start.Add(time.Hour)); err != nil || n != 1 {
			t.Errorf("prune %d %v", n, err)
		}
	})
}

func TestSecretIsSharedAndStable(t *testing.T) {
	t.Parallel()
	forBackends(t, func(t *testing.T, open func(testing.TB) Store) {
		a, b := open(t), open(t)
		ctx := context.Background()
		k1, err := a.Secret(ctx, "seal")
		if err != nil {
			t.Fatal(err)
		}
		k2, err := b.Secret(ctx, "seal")
		if err != nil {
			t.Fatal(err)
		}
		if len(k1) != 32 || string(k1) != string(k2) {
			t.Fatalf("two processes got different secrets: %x %x", k1, k2)
		}
		other, err := a.Secret(ctx, "other")
		if err != nil || string(other) == string(k1) {
			t.Fatalf("secrets are per name: %v", err)
		}
	})
}

// Command sidefx is the side effect the fleet tests count: it appends one
// line, its second argument, to the file named by its first. Given a
// PostgreSQL DSN as a third argument it first reads the audit chain's
// highest seq and appends it after the argument, so a test can check that
// the call's decision event was committed before the side effect ran
// (write-ahead, docs/security.md).
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/jackc/pgx/v5"
)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: sidefx FILE ARG [DSN]")
		os.Exit(2)
	}
	line := os.Args[2]
	if len(os.Args) > 3 {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, os.Args[3])
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		var seq int64
		err = conn.QueryRow(ctx, `SELECT coalesce(max(seq), 0) FROM audit_events`).Scan(&seq)
		conn.Close(ctx)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		line += fmt.Sprintf(" %d", seq)
	}
	f, err := os.OpenFile(os.Args[1], os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if _, err := fmt.Fprintln(f, line); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := f.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println("ok")
}

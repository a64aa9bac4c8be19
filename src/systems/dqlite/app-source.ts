import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

import { cacheDir } from '../../core/fs.js';

/** Where Debian's golang-github-canonical-go-dqlite-dev puts the go-dqlite sources (GOPATH layout). */
export const DEBIAN_GOPATH = '/usr/share/gocode';
const BUILD_TIMEOUT_MS = 300_000;

/**
 * Our own small go-dqlite app (`mallory-dqlite`): the same HTTP API as dqlite-demo (GET/PUT /KEY),
 * plus compare-and-set (POST /KEY?cas=OLD with NEW as the body, one UPDATE … WHERE value = OLD),
 * transactions of micro-ops (POST /txn, one SQL transaction each, optionally guarded; see
 * `DqliteTxnClient`) and
 * flags for raft's snapshot parameters, which dqlite-demo fixes at 1024/8192 — so rare under a
 * fault-heavy campaign (about one snapshot per node in 5 minutes) that faults never meet them.
 * It is built offline from Debian's go-dqlite sources, once per source version, into a cache dir.
 */
export const DQLITE_APP_SOURCE = String.raw`// mallory-dqlite: a small key-value HTTP app on go-dqlite for Mallory, with snapshot parameters
// and a compare-and-set. GET /KEY → value; PUT /KEY (body) → "done"; POST /KEY?cas=OLD (body NEW)
// → "done" or "Error: cas mismatch". Errors are answered as "Error: ..." lines, like dqlite-demo.
// POST /txn runs a transaction of micro-ops in one SQL transaction and answers in JSON (see runTxn).
package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"math/rand"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	dqlite "github.com/canonical/go-dqlite"
	"github.com/canonical/go-dqlite/app"
	"github.com/canonical/go-dqlite/client"
)

const (
	schema = "CREATE TABLE IF NOT EXISTS model (key TEXT, value TEXT, UNIQUE(key))"
	query  = "SELECT value FROM model WHERE key = ?"
	update = "INSERT OR REPLACE INTO model(key, value) VALUES(?, ?)"
	cas    = "UPDATE model SET value = ? WHERE key = ? AND value = ?"

	// The transactional workloads' keys: a register holds "7", a list "1 2 3". The upserts change
	// nothing (0 rows) when the key holds the other kind.
	txnSchema = "CREATE TABLE IF NOT EXISTS txn (key TEXT PRIMARY KEY, kind TEXT NOT NULL, value TEXT NOT NULL)"
	txnRead   = "SELECT kind, value FROM txn WHERE key = ?"
	txnWrite  = "INSERT INTO txn(key, kind, value) VALUES(?, 'register', ?) " +
		"ON CONFLICT(key) DO UPDATE SET value = excluded.value WHERE kind = 'register'"
	txnAppend = "INSERT INTO txn(key, kind, value) VALUES(?, 'list', ?) " +
		"ON CONFLICT(key) DO UPDATE SET value = value || ' ' || excluded.value WHERE kind = 'list'"
	// Used when a request names no timeout of its own.
	txnDefaultTimeout = 5 * time.Second
)

func main() {
	api := flag.String("api", "", "address of the HTTP API")
	db := flag.String("db", "", "address for dqlite replication")
	join := flag.String("join", "", "comma-separated addresses of existing nodes")
	dir := flag.String("dir", "/tmp/mallory-dqlite", "data directory")
	threshold := flag.Uint64("snapshot-threshold", 1024, "raft entries between snapshots")
	trailing := flag.Uint64("snapshot-trailing", 8192, "raft entries kept after a snapshot")
	voters := flag.Int("voters", 3, "number of voters")
	verbose := flag.Bool("verbose", false, "log go-dqlite's messages")
	flag.Parse()
	if *api == "" || *db == "" {
		log.Fatal("--api and --db are required")
	}
	path := filepath.Join(*dir, *db)
	if err := os.MkdirAll(path, 0o755); err != nil {
		log.Fatalf("can't create %s: %v", path, err)
	}
	logFunc := func(l client.LogLevel, format string, a ...interface{}) {
		if *verbose {
			log.Printf(fmt.Sprintf("%s: %s: %s\n", *api, l.String(), format), a...)
		}
	}
	var cluster []string
	if *join != "" {
		cluster = strings.Split(*join, ",")
	}
	node, err := app.New(path, app.WithAddress(*db), app.WithCluster(cluster), app.WithLogFunc(logFunc),
		app.WithVoters(*voters),
		app.WithSnapshotParams(dqlite.SnapshotParams{Threshold: *threshold, Trailing: *trailing}))
	if err != nil {
		log.Fatal(err)
	}
	if err := node.Ready(context.Background()); err != nil {
		log.Fatal(err)
	}
	// Opening the database asks the cluster's leader: a node that starts while the leader changes
	// (removed, cut off, paused) gets "call open (budget 0s): receive: header: EOF" and the like.
	// It retries, as it does the tables below, rather than exit (an exit would be reported as a
	// crash of dqlite; one was, in a 10-minute campaign).
	var conn *sql.DB
	for attempt := 1; conn == nil; attempt++ {
		opened, err := node.Open(context.Background(), "demo")
		if err == nil {
			conn = opened
			break
		}
		if attempt%20 == 1 {
			log.Printf("opening the database, attempt %d: %v (retrying)", attempt, err)
		}
		time.Sleep(time.Duration(50+rand.Intn(200)) * time.Millisecond)
	}
	// Nodes that start together all create the table; dqlite answers "database is locked" to all
	// but one of them. A node that starts while the cluster has no leader (a fault, a restart of
	// the others) gets "receive: header: EOF", "no available dqlite leader server found" and the
	// like. This is the test harness's app: it never gives up on the cluster (exiting would be
	// reported as a crash of dqlite); it retries until the tables exist, saying so now and then,
	// and the readiness check tells whether the cluster came back.
	for _, statement := range []string{schema, txnSchema} {
		for attempt := 1; ; attempt++ {
			_, err := conn.Exec(statement)
			if err == nil {
				break
			}
			if attempt%20 == 1 {
				log.Printf("creating the tables, attempt %d: %v (retrying)", attempt, err)
			}
			time.Sleep(time.Duration(50+rand.Intn(200)) * time.Millisecond)
		}
	}
	http.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%s\n", handle(conn, r))
	})
	// The register workload's keys are "<prefix>-kN", so none is "txn"; other methods go to handle.
	http.HandleFunc("/txn", func(w http.ResponseWriter, r *http.Request) {
		if r.Method != "POST" {
			fmt.Fprintf(w, "%s\n", handle(conn, r))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(runTxn(conn, r))
	})
	listener, err := net.Listen("tcp", *api)
	if err != nil {
		log.Fatal(err)
	}
	go http.Serve(listener, nil)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM)
	<-ch
	listener.Close()
	conn.Close()
	node.Handover(context.Background())
	node.Close()
}

func handle(conn *sql.DB, r *http.Request) string {
	key := strings.TrimLeft(r.URL.Path, "/")
	switch r.Method {
	case "GET":
		var value string
		if err := conn.QueryRow(query, key).Scan(&value); err != nil {
			return "Error: " + err.Error()
		}
		return value
	case "PUT":
		body, _ := io.ReadAll(r.Body)
		return inTxn(conn, func(tx *sql.Tx) string {
			if _, err := tx.Exec(update, key, string(body)); err != nil {
				return "Error: " + err.Error()
			}
			return ""
		})
	case "POST":
		body, _ := io.ReadAll(r.Body)
		return inTxn(conn, func(tx *sql.Tx) string {
			res, err := tx.Exec(cas, string(body), key, r.URL.Query().Get("cas"))
			if err != nil {
				return "Error: " + err.Error()
			}
			if n, err := res.RowsAffected(); err != nil {
				return "Error: " + err.Error()
			} else if n == 0 {
				return "Error: cas mismatch"
			}
			return ""
		})
	}
	return fmt.Sprintf("Error: unsupported method %q", r.Method)
}

// inTxn runs one write in an explicit transaction. database/sql runs a plain Exec again when the
// driver says the connection is bad, and go-dqlite says so for a lost leader too, even when the
// write committed: a write could be applied twice (after another one, bringing an old value back)
// and an applied cas answered "cas mismatch". Inside a transaction nothing is run again: BEGIN
// (which writes nothing) may be, and an error from then on is the answer. "not started" means
// nothing ran.
func inTxn(conn *sql.DB, write func(tx *sql.Tx) string) string {
	tx, err := conn.Begin()
	if err != nil {
		return "Error: not started: " + err.Error()
	}
	if msg := write(tx); msg != "" {
		tx.Rollback()
		return msg
	}
	if err := tx.Commit(); err != nil {
		return "Error: commit: " + err.Error()
	}
	return "done"
}

// txnRequest is POST /txn's body: {"ops": [["r", "k", null], ["append", "k", 1], ["w", "k", 2]],
// "guard": [["k", 2], ["j", null]], "timeoutMs": 2500}; the guard is optional. Fields match the
// JSON names case-insensitively.
type txnRequest struct {
	Ops       [][]interface{}
	Guard     [][]interface{}
	TimeoutMs int64
}

// guardEntry is a register value a guarded transaction expects to find: nil for nothing.
type guardEntry struct {
	key   string
	value *int64
}

type microOp struct {
	f     string
	key   string
	value interface{}
}

// runTxn runs the micro-ops in one SQL transaction and answers {"type": "ok", "value": ops with the
// reads filled in}, or {"type": "fail" | "info", "error": ...}. A wrong "fail" makes the checker
// see anomalies that never happened, so "fail" is answered only when nothing of the transaction can
// have been committed; "info" when it may have been:
//   - BEGIN failed: fail. database/sql retries BEGIN on driver.ErrBadConn (go-dqlite's answer to
//     "not leader" and lost connections) on other connections; BEGIN itself writes nothing.
//   - the guard not met (a key of it, read inside the transaction, not holding its value): fail,
//     nothing written. Read in the transaction, it holds at COMMIT too (serializable).
//   - a micro-op failed (a statement's error, or an append on a register): the transaction is
//     rolled back, and the answer is fail when the ROLLBACK succeeded — the server still held the
//     transaction open, so every statement before ran inside it — or when no write statement was
//     sent yet (reads commit nothing). Otherwise info: a ROLLBACK that fails cannot show that the
//     server had not dropped the transaction and run later writes in autocommit mode.
//   - COMMIT failed or timed out: info ("leadership lost" at COMMIT may still commit; a COMMIT
//     whose answer was lost may have committed).
func runTxn(db *sql.DB, r *http.Request) map[string]interface{} {
	var req txnRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		return txnReply("fail", "bad request: "+err.Error())
	}
	ops, err := parseMicroOps(req.Ops)
	if err != nil {
		return txnReply("fail", "bad request: "+err.Error())
	}
	guard, err := parseGuard(req.Guard)
	if err != nil {
		return txnReply("fail", "bad request: "+err.Error())
	}
	timeout := txnDefaultTimeout
	if req.TimeoutMs > 0 {
		timeout = time.Duration(req.TimeoutMs) * time.Millisecond
	}
	ctx, cancel := context.WithTimeout(r.Context(), timeout)
	defer cancel()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return txnReply("fail", "begin: "+err.Error())
	}
	for _, g := range guard {
		read := microOp{f: "r", key: g.key}
		if err := applyMicroOp(ctx, tx, &read); err != nil {
			tx.Rollback()
			return txnReply("fail", fmt.Sprintf("guard %s: %v", g.key, err))
		}
		if !guardHolds(read.value, g.value) {
			tx.Rollback()
			expected := "nothing"
			if g.value != nil {
				expected = strconv.FormatInt(*g.value, 10)
			}
			held := "nothing"
			if read.value != nil {
				held = fmt.Sprint(read.value)
			}
			return txnReply("fail", fmt.Sprintf("guard not met: key %s holds %s, not %s", g.key, held, expected))
		}
	}
	wrote := false
	for i := range ops {
		if ops[i].f != "r" {
			wrote = true
		}
		if err := applyMicroOp(ctx, tx, &ops[i]); err != nil {
			cause := fmt.Sprintf("%s %s: %v", ops[i].f, ops[i].key, err)
			if rollbackErr := tx.Rollback(); rollbackErr != nil && wrote {
				return txnReply("info", cause+"; rollback: "+rollbackErr.Error())
			}
			return txnReply("fail", cause)
		}
	}
	if err := tx.Commit(); err != nil {
		return txnReply("info", "commit: "+err.Error())
	}
	value := make([]interface{}, len(ops))
	for i, op := range ops {
		value[i] = []interface{}{op.f, op.key, op.value}
	}
	return map[string]interface{}{"type": "ok", "value": value}
}

func txnReply(outcome string, message string) map[string]interface{} {
	return map[string]interface{}{"type": outcome, "error": message}
}

func parseGuard(raw [][]interface{}) ([]guardEntry, error) {
	guard := make([]guardEntry, len(raw))
	for i, entry := range raw {
		if len(entry) != 2 {
			return nil, fmt.Errorf("guard %d: want [key, number or null]", i)
		}
		key, ok := entry[0].(string)
		if !ok {
			return nil, fmt.Errorf("guard %d: want [key, number or null]", i)
		}
		guard[i] = guardEntry{key: key}
		if entry[1] == nil {
			continue
		}
		number, ok := entry[1].(float64)
		if !ok || number != float64(int64(number)) {
			return nil, fmt.Errorf("guard %d: want [key, number or null]", i)
		}
		value := int64(number)
		guard[i].value = &value
	}
	return guard, nil
}

// guardHolds says whether a read value (nil, a register's int64, a list) is the expected register.
func guardHolds(held interface{}, expected *int64) bool {
	if expected == nil {
		return held == nil
	}
	register, ok := held.(int64)
	return ok && register == *expected
}

func parseMicroOps(raw [][]interface{}) ([]microOp, error) {
	ops := make([]microOp, len(raw))
	for i, op := range raw {
		if len(op) != 3 {
			return nil, fmt.Errorf("micro-op %d has %d elements, not 3", i, len(op))
		}
		f, okF := op[0].(string)
		key, okKey := op[1].(string)
		if !okF || !okKey {
			return nil, fmt.Errorf("micro-op %d: want [f, key, value] with strings f and key", i)
		}
		switch f {
		case "r":
			ops[i] = microOp{f: f, key: key}
		case "w", "append":
			number, ok := op[2].(float64)
			if !ok || number != float64(int64(number)) {
				return nil, fmt.Errorf("micro-op %d: %s needs an integer value", i, f)
			}
			ops[i] = microOp{f: f, key: key, value: int64(number)}
		default:
			return nil, fmt.Errorf("micro-op %d: unknown function %q (r, w or append)", i, f)
		}
	}
	return ops, nil
}

// applyMicroOp runs one micro-op inside tx; a read fills in op.value (nil when the key holds nothing).
func applyMicroOp(ctx context.Context, tx *sql.Tx, op *microOp) error {
	switch op.f {
	case "r":
		var kind, text string
		err := tx.QueryRowContext(ctx, txnRead, op.key).Scan(&kind, &text)
		if errors.Is(err, sql.ErrNoRows) {
			op.value = nil
			return nil
		}
		if err != nil {
			return err
		}
		op.value, err = decodeTxnValue(kind, text)
		return err
	case "w", "append":
		statement := txnWrite
		if op.f == "append" {
			statement = txnAppend
		}
		res, err := tx.ExecContext(ctx, statement, op.key, strconv.FormatInt(op.value.(int64), 10))
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return err
		}
		if n == 0 {
			return errors.New("the key holds the other kind of value (a list or a register)")
		}
		return nil
	}
	return fmt.Errorf("unknown function %q", op.f)
}

func decodeTxnValue(kind string, text string) (interface{}, error) {
	if kind == "register" {
		return strconv.ParseInt(text, 10, 64)
	}
	list := []int64{}
	for _, field := range strings.Fields(text) {
		element, err := strconv.ParseInt(field, 10, 64)
		if err != nil {
			return nil, err
		}
		list = append(list, element)
	}
	return list, nil
}
`;

/** Where this source version of the app is built (in the cache dir, by the source's hash). */
export function dqliteAppBinary(): string {
  const hash = createHash('sha256').update(DQLITE_APP_SOURCE).digest('hex').slice(0, 12);
  return join(cacheDir(), `dqlite-app-${hash}`, 'mallory-dqlite');
}

/** Builds the app if this source version is not built yet; returns the binary's path. */
export async function buildDqliteApp(): Promise<string> {
  const binary = dqliteAppBinary();
  const dir = dirname(binary);
  if (existsSync(binary)) return binary;
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'main.go'), DQLITE_APP_SOURCE);
  const partial = `${binary}.${process.pid}.partial`;
  await new Promise<void>((resolve, reject) => {
    execFile(
      'go',
      ['build', '-o', partial, 'main.go'],
      {
        cwd: dir,
        timeout: BUILD_TIMEOUT_MS,
        env: {
          ...process.env,
          GO111MODULE: 'off',
          GOPATH: DEBIAN_GOPATH,
          GOPROXY: 'off',
          GOCACHE: join(cacheDir(), 'gocache'),
          CGO_LDFLAGS_ALLOW: '-Wl,-z,now',
        },
      },
      (error, _stdout, stderr) => {
        if (error) {
          reject(
            new Error(
              `cannot build the dqlite app (apt-get install -y golang-go golang-github-canonical-go-dqlite-dev): ${stderr.trim() || error.message}`,
            ),
          );
        } else resolve();
      },
    );
  });
  renameSync(partial, binary);
  return binary;
}

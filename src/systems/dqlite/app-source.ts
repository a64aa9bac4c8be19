import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { cacheDir } from '../../core/fs.js';

/** Where Debian's golang-github-canonical-go-dqlite-dev puts the go-dqlite sources (GOPATH layout). */
export const DEBIAN_GOPATH = '/usr/share/gocode';
const BUILD_TIMEOUT_MS = 300_000;

/**
 * Our own small go-dqlite app (`mallory-dqlite`): the same HTTP API as dqlite-demo (GET/PUT /KEY),
 * plus compare-and-set (POST /KEY?cas=OLD with NEW as the body, one UPDATE … WHERE value = OLD) and
 * flags for raft's snapshot parameters, which dqlite-demo fixes at 1024/8192 — so rare under a
 * fault-heavy campaign (about one snapshot per node in 5 minutes) that faults never meet them.
 * It is built offline from Debian's go-dqlite sources, once per source version, into a cache dir.
 */
export const DQLITE_APP_SOURCE = String.raw`// mallory-dqlite: a small key-value HTTP app on go-dqlite for Mallory, with snapshot parameters
// and a compare-and-set. GET /KEY → value; PUT /KEY (body) → "done"; POST /KEY?cas=OLD (body NEW)
// → "done" or "Error: cas mismatch". Errors are answered as "Error: ..." lines, like dqlite-demo.
package main

import (
	"context"
	"database/sql"
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
	conn, err := node.Open(context.Background(), "demo")
	if err != nil {
		log.Fatal(err)
	}
	// Nodes that start together all create the table; dqlite answers "database is locked" to all
	// but one of them, so retry for a while before giving up.
	for attempt := 1; ; attempt++ {
		_, err := conn.Exec(schema)
		if err == nil {
			break
		}
		if attempt == 60 || !strings.Contains(err.Error(), "locked") {
			log.Fatalf("can't create the table: %v", err)
		}
		time.Sleep(time.Duration(50+rand.Intn(200)) * time.Millisecond)
	}
	http.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%s\n", handle(conn, r))
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
		if _, err := conn.Exec(update, key, string(body)); err != nil {
			return "Error: " + err.Error()
		}
		return "done"
	case "POST":
		body, _ := io.ReadAll(r.Body)
		res, err := conn.Exec(cas, string(body), key, r.URL.Query().Get("cas"))
		if err != nil {
			return "Error: " + err.Error()
		}
		if n, err := res.RowsAffected(); err != nil {
			return "Error: " + err.Error()
		} else if n == 0 {
			return "Error: cas mismatch"
		}
		return "done"
	}
	return fmt.Sprintf("Error: unsupported method %q", r.Method)
}
`;

/** Builds the app if this source version is not built yet; returns the binary's path. */
export async function buildDqliteApp(): Promise<string> {
  const hash = createHash('sha256').update(DQLITE_APP_SOURCE).digest('hex').slice(0, 12);
  const dir = join(cacheDir(), `dqlite-app-${hash}`);
  const binary = join(dir, 'mallory-dqlite');
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

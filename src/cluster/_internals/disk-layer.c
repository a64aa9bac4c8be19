/*
 * mallory-disk: Mallory's FUSE pass-through layer over one node's data dir.
 *
 *   mallory-disk BACKING MOUNTPOINT SOCKET
 *   mallory-disk --ask SOCKET LINE
 *
 * The second form is the layer's client: it sends LINE to the layer listening on SOCKET and prints
 * its one-line answer (exit 0), or says why it could not (exit 1). It lets a layer on another host
 * be driven by running a command there, with nothing but the binary itself.
 *
 * Every operation on MOUNTPOINT is done on BACKING. Besides, for each file the layer remembers what
 * it was at its last fsync (the bytes writes and truncations have replaced since, and its size), so
 * that on command it can drop every write that was never fsynced. The durability rule it applies:
 *
 *   - a file's content is durable up to its last fsync or fdatasync (or, for a file the layer saw
 *     no write to since it mounted, its content then): `drop-unfsynced` puts every file back to it;
 *   - a file created through the layer is durable once the file itself or its directory has been
 *     fsynced; until then `drop-unfsynced` removes it (under whatever name it has by then). A file
 *     whose directory was fsynced but not itself keeps its name and loses its unfsynced content;
 *   - everything else in the namespace (mkdir, rename, unlink, links) is durable at once; a file a
 *     rename replaced is not brought back.
 *
 * `torn-write SEED [sector|byte]` drops the same, except that each file that keeps its name keeps,
 * on top of its durable content, a prefix of its last unsynced write (written back at that write's
 * offset; what lay between the durable end and that offset reads as zeros; a write(2) the kernel
 * sent in pieces counts as one, see `note_write`). h is a 64-bit FNV-1a hash of SEED and the file's
 * path in the mount, so the same seed cuts the same write the same way. The cut, for a write of LEN
 * bytes at OFF:
 *   - `sector` (the default): sectors of 512 bytes are written whole or not at all, the contract
 *     most write-ahead logs assume (a drive's atomic write unit is at least one logical block, 512
 *     bytes at the least). The write keeps the sectors before a sector boundary B strictly inside
 *     it, B the (h mod N)-th of its N such boundaries, with them the bytes before OFF in its first
 *     sector as they were (the sector went to disk whole); a write with no boundary inside it
 *     (within one sector) keeps nothing.
 *   - `byte`: K = 1 + h mod (LEN - 1) bytes, less one when K is a multiple of 512 (0 when LEN is
 *     1): a strict, non-empty prefix that never ends on a sector boundary, so a sector is split,
 *     for systems that declare they tolerate that.
 *
 * Commands, one line each on the unix socket SOCKET, answered by one line ("ok …" or "error …"):
 *   ping | status | drop-unfsynced | torn-write SEED [sector|byte] | fsync-error on|off (fsync answers EIO and
 *   makes nothing durable) | full on|off (writes answer ENOSPC) | slow MS (each read and write
 *   waits MS ms).
 * Drop only while no process has the files open (after the node was killed): the kernel's page
 * cache of a file is dropped when the file is opened again, never under an open file.
 */
#define FUSE_USE_VERSION 31
#define _GNU_SOURCE

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define MAX_LINE 256
#define MAX_DEPTH 64
#define MAX_PATH_LEN 4096
#define SECTOR_BYTES 512

struct segment {
	off_t off;
	size_t len;
	char *bytes;
};

/*
 * A file written since its last fsync: its size then, the bytes overwritten since (oldest first),
 * and where its last write went (`last_len` 0: none, or a truncation cut it off since) and who
 * made it.
 */
struct pending {
	ino_t ino;
	off_t synced_size;
	int created;
	int handled;
	struct segment *segments;
	size_t count, capacity;
	off_t last_off;
	size_t last_len;
	pid_t last_pid;
};

static int root_fd = -1;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct pending *pendings;
static size_t pending_count, pending_capacity;
static atomic_int fsync_error, disk_full, slow_ms;

static void *grow(void *array, size_t *capacity, size_t size)
{
	size_t next = *capacity == 0 ? 8 : *capacity * 2;
	void *bigger = realloc(array, next * size);
	if (bigger == NULL) {
		fprintf(stderr, "mallory-disk: out of memory\n");
		abort();
	}
	*capacity = next;
	return bigger;
}

static struct pending *find_pending(ino_t ino)
{
	for (size_t i = 0; i < pending_count; i++)
		if (pendings[i].ino == ino)
			return &pendings[i];
	return NULL;
}

static struct pending *track(ino_t ino, off_t size)
{
	struct pending *p = find_pending(ino);
	if (p != NULL)
		return p;
	if (pending_count == pending_capacity)
		pendings = grow(pendings, &pending_capacity, sizeof *pendings);
	p = &pendings[pending_count++];
	memset(p, 0, sizeof *p);
	p->ino = ino;
	p->synced_size = size;
	return p;
}

static void forget(ino_t ino)
{
	struct pending *p = find_pending(ino);
	if (p == NULL)
		return;
	for (size_t i = 0; i < p->count; i++)
		free(p->segments[i].bytes);
	free(p->segments);
	*p = pendings[--pending_count];
}

static void forget_all(void)
{
	while (pending_count > 0)
		forget(pendings[0].ino);
}

/* Keeps the bytes [from, to) of the file before they are overwritten or cut off. */
static int save(struct pending *p, int fd, off_t from, off_t to)
{
	if (to > p->synced_size)
		to = p->synced_size;
	if (from >= to)
		return 0;
	size_t len = (size_t)(to - from);
	char *bytes = malloc(len);
	if (bytes == NULL)
		return -ENOMEM;
	ssize_t got = pread(fd, bytes, len, from);
	if (got < 0 && errno == EBADF) {
		/* A write-only descriptor: read the file through another one. */
		char self[64];
		snprintf(self, sizeof self, "/proc/self/fd/%d", fd);
		int reader = open(self, O_RDONLY | O_CLOEXEC);
		got = reader < 0 ? -1 : pread(reader, bytes, len, from);
		if (reader >= 0)
			close(reader);
	}
	if (got < 0) {
		free(bytes);
		return -errno;
	}
	if (p->count == p->capacity)
		p->segments = grow(p->segments, &p->capacity, sizeof *p->segments);
	p->segments[p->count++] = (struct segment){ from, (size_t)got, bytes };
	return 0;
}

/*
 * Before a write of `size` bytes at `off` (or at the end, for O_APPEND) by thread `pid`. Call under
 * the lock. The kernel cuts one write(2) into several requests at page boundaries: a request that
 * starts where the file's last one ended, on a page boundary, from the same thread, continues it.
 */
static int note_write(int fd, off_t off, size_t size, pid_t pid)
{
	struct stat st;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (fcntl(fd, F_GETFL) & O_APPEND)
		off = st.st_size;
	struct pending *p = track(st.st_ino, st.st_size);
	int r = save(p, fd, off, st.st_size < off + (off_t)size ? st.st_size : off + (off_t)size);
	if (r != 0)
		return r;
	off_t page = (off_t)sysconf(_SC_PAGESIZE);
	if (p->last_len > 0 && p->last_pid == pid && p->last_off + (off_t)p->last_len == off && off % page == 0) {
		p->last_len += size;
	} else {
		p->last_off = off;
		p->last_len = size;
		p->last_pid = pid;
	}
	return 0;
}

/* Before the file is cut or extended to `size`. Call under the lock. */
static int note_truncate(int fd, off_t size)
{
	struct stat st;
	if (fstat(fd, &st) < 0)
		return -errno;
	struct pending *p = track(st.st_ino, st.st_size);
	if (p->last_len > 0 && p->last_off + (off_t)p->last_len > size)
		p->last_len = size > p->last_off ? (size_t)(size - p->last_off) : 0;
	return save(p, fd, size, st.st_size);
}

static int restore(struct pending *p, int fd)
{
	for (size_t i = p->count; i-- > 0;) {
		struct segment *s = &p->segments[i];
		if (pwrite(fd, s->bytes, s->len, s->off) != (ssize_t)s->len)
			return -1;
	}
	return ftruncate(fd, p->synced_size);
}

/* 64-bit FNV-1a over the seed's decimal digits, a NUL, then the path. */
static uint64_t cut_hash(uint64_t seed, const char *path)
{
	char digits[32];
	int n = snprintf(digits, sizeof digits, "%llu", (unsigned long long)seed);
	uint64_t h = 0xcbf29ce484222325ULL;
	for (int i = 0; i <= n; i++)
		h = (h ^ (unsigned char)digits[i]) * 0x100000001b3ULL;
	for (const char *c = path; *c != '\0'; c++)
		h = (h ^ (unsigned char)*c) * 0x100000001b3ULL;
	return h;
}

/* How much of a torn write of `len` bytes stays in byte mode: a strict prefix, not a multiple of a sector. */
static size_t cut_length(uint64_t seed, const char *path, size_t len)
{
	if (len <= 1)
		return 0;
	size_t keep = 1 + (size_t)(cut_hash(seed, path) % (uint64_t)(len - 1));
	if (keep % SECTOR_BYTES == 0)
		keep--;
	return keep;
}

/*
 * In sector mode, the file offset where what a torn write of `len` bytes at `off` keeps ends: a
 * sector boundary strictly inside the write, or `off` when there is none (it keeps nothing).
 */
static off_t cut_sector_end(uint64_t seed, const char *path, off_t off, size_t len)
{
	off_t first = (off / SECTOR_BYTES + 1) * SECTOR_BYTES;
	off_t end = off + (off_t)len;
	if (first >= end)
		return off;
	uint64_t boundaries = (uint64_t)((end - 1 - first) / SECTOR_BYTES) + 1;
	return first + (off_t)(cut_hash(seed, path) % boundaries) * SECTOR_BYTES;
}

struct drop_counts {
	int restored, removed, torn, failed;
};

/* What a drop does: `drop-unfsynced`, or `torn-write SEED` (tear each file's last write). */
struct drop_mode {
	int torn;
	/* Tear inside a sector (`byte`), or keep whole sectors only (`sector`). */
	int in_sector;
	uint64_t seed;
};

/*
 * Restores the file to what it was at its last fsync; in torn mode, then writes back a prefix of
 * its last unsynced write. 1 when a write was torn, 0 when not, -1 on failure.
 */
static int roll_back(struct pending *p, int fd, const struct drop_mode *mode, const char *path)
{
	char *kept = NULL;
	/* What stays: the bytes [from, from + length) as they are now; of the write, `keep` bytes. */
	off_t from = p->last_off;
	size_t length = 0, keep = 0;
	if (mode->torn && p->last_len > 0) {
		if (mode->in_sector) {
			keep = cut_length(mode->seed, path, p->last_len);
			length = keep;
		} else {
			off_t cut = cut_sector_end(mode->seed, path, p->last_off, p->last_len);
			keep = (size_t)(cut - p->last_off);
			if (keep > 0) {
				from = p->last_off / SECTOR_BYTES * SECTOR_BYTES;
				length = (size_t)(cut - from);
			}
		}
		if (length > 0) {
			kept = malloc(length);
			if (kept == NULL || pread(fd, kept, length, from) != (ssize_t)length) {
				free(kept);
				return -1;
			}
		}
	}
	int r = restore(p, fd);
	if (r == 0 && kept != NULL && pwrite(fd, kept, length, from) != (ssize_t)length)
		r = -1;
	free(kept);
	if (r < 0)
		return -1;
	if (!mode->torn || p->last_len == 0)
		return 0;
	printf("mallory-disk: torn-write %s: kept %zu of the last unsynced write's %zu bytes at offset %lld (%s)\n",
	       path, keep, p->last_len, (long long)p->last_off,
	       mode->in_sector ? "torn inside a sector" : "whole 512-byte sectors");
	fflush(stdout);
	return 1;
}

static void drop_in(int dir_fd, const char *dir_path, int depth, const struct drop_mode *mode,
		    struct drop_counts *counts)
{
	DIR *dir = fdopendir(dir_fd);
	if (dir == NULL) {
		close(dir_fd);
		counts->failed++;
		return;
	}
	struct dirent *e;
	while ((e = readdir(dir)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		struct stat st;
		if (fstatat(dirfd(dir), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		char path[MAX_PATH_LEN];
		snprintf(path, sizeof path, "%s%s%s", dir_path, *dir_path ? "/" : "", e->d_name);
		if (S_ISDIR(st.st_mode)) {
			int sub = openat(dirfd(dir), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
			if (sub >= 0 && depth < MAX_DEPTH)
				drop_in(sub, path, depth + 1, mode, counts);
			else if (sub >= 0)
				close(sub);
			continue;
		}
		struct pending *p = S_ISREG(st.st_mode) ? find_pending(st.st_ino) : NULL;
		if (p == NULL)
			continue;
		if (p->created) {
			if (unlinkat(dirfd(dir), e->d_name, 0) == 0)
				counts->removed++;
			else
				counts->failed++;
			continue;
		}
		if (p->handled)
			continue;
		p->handled = 1;
		int fd = openat(dirfd(dir), e->d_name, O_RDWR | O_NOFOLLOW);
		int r = fd >= 0 ? roll_back(p, fd, mode, path) : -1;
		if (r < 0)
			counts->failed++;
		else
			counts->restored++;
		if (r > 0)
			counts->torn++;
		if (fd >= 0)
			close(fd);
	}
	closedir(dir);
}

static struct drop_counts drop_unfsynced(const struct drop_mode *mode)
{
	struct drop_counts counts = { 0, 0, 0, 0 };
	pthread_mutex_lock(&lock);
	int fd = openat(root_fd, ".", O_RDONLY | O_DIRECTORY);
	if (fd >= 0)
		drop_in(fd, "", 0, mode, &counts);
	else
		counts.failed++;
	forget_all();
	pthread_mutex_unlock(&lock);
	return counts;
}

static const char *rel(const char *path)
{
	return path[1] == '\0' ? "." : path + 1;
}

static void slow_down(void)
{
	int ms = atomic_load(&slow_ms);
	if (ms <= 0)
		return;
	struct timespec t = { ms / 1000, (long)(ms % 1000) * 1000000L };
	while (nanosleep(&t, &t) < 0 && errno == EINTR)
		;
}

static void *layer_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	(void)conn;
	cfg->use_ino = 1;
	cfg->nullpath_ok = 1;
	/* No attribute or name caching: a dropped write must not be seen through a stale size. */
	cfg->attr_timeout = 0;
	cfg->entry_timeout = 0;
	cfg->negative_timeout = 0;
	return NULL;
}

static int layer_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	int r = fi != NULL ? fstat((int)fi->fh, st) : fstatat(root_fd, rel(path), st, AT_SYMLINK_NOFOLLOW);
	return r < 0 ? -errno : 0;
}

static int layer_access(const char *path, int mask)
{
	return faccessat(root_fd, rel(path), mask, 0) < 0 ? -errno : 0;
}

static int layer_readlink(const char *path, char *buf, size_t size)
{
	ssize_t n = readlinkat(root_fd, rel(path), buf, size - 1);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

static int layer_mknod(const char *path, mode_t mode, dev_t rdev)
{
	return mknodat(root_fd, rel(path), mode, rdev) < 0 ? -errno : 0;
}

static int layer_mkdir(const char *path, mode_t mode)
{
	return mkdirat(root_fd, rel(path), mode) < 0 ? -errno : 0;
}

/* Forgets what is pending for the file at `path` if removing that name removes the file. */
static void forget_name(const char *path)
{
	struct stat st;
	if (fstatat(root_fd, rel(path), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) && st.st_nlink <= 1)
		forget(st.st_ino);
}

static int layer_unlink(const char *path)
{
	pthread_mutex_lock(&lock);
	forget_name(path);
	int r = unlinkat(root_fd, rel(path), 0) < 0 ? -errno : 0;
	pthread_mutex_unlock(&lock);
	return r;
}

static int layer_rmdir(const char *path)
{
	return unlinkat(root_fd, rel(path), AT_REMOVEDIR) < 0 ? -errno : 0;
}

static int layer_symlink(const char *target, const char *path)
{
	return symlinkat(target, root_fd, rel(path)) < 0 ? -errno : 0;
}

static int layer_rename(const char *from, const char *to, unsigned int flags)
{
	pthread_mutex_lock(&lock);
	if (!(flags & RENAME_EXCHANGE))
		forget_name(to);
	int r = renameat2(root_fd, rel(from), root_fd, rel(to), flags) < 0 ? -errno : 0;
	pthread_mutex_unlock(&lock);
	return r;
}

static int layer_link(const char *from, const char *to)
{
	return linkat(root_fd, rel(from), root_fd, rel(to), 0) < 0 ? -errno : 0;
}

static int layer_chmod(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	int r = fi != NULL ? fchmod((int)fi->fh, mode) : fchmodat(root_fd, rel(path), mode, 0);
	return r < 0 ? -errno : 0;
}

static int layer_chown(const char *path, uid_t uid, gid_t gid, struct fuse_file_info *fi)
{
	int r = fi != NULL ? fchown((int)fi->fh, uid, gid)
			   : fchownat(root_fd, rel(path), uid, gid, AT_SYMLINK_NOFOLLOW);
	return r < 0 ? -errno : 0;
}

static int truncate_fd(int fd, off_t size)
{
	struct stat st;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (size > st.st_size && atomic_load(&disk_full))
		return -ENOSPC;
	pthread_mutex_lock(&lock);
	int r = note_truncate(fd, size);
	if (r == 0 && ftruncate(fd, size) < 0)
		r = -errno;
	pthread_mutex_unlock(&lock);
	return r;
}

static int layer_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
	if (fi != NULL)
		return truncate_fd((int)fi->fh, size);
	int fd = openat(root_fd, rel(path), O_WRONLY);
	if (fd < 0)
		return -errno;
	int r = truncate_fd(fd, size);
	close(fd);
	return r;
}

static int layer_utimens(const char *path, const struct timespec ts[2], struct fuse_file_info *fi)
{
	int r = fi != NULL ? futimens((int)fi->fh, ts) : utimensat(root_fd, rel(path), ts, AT_SYMLINK_NOFOLLOW);
	return r < 0 ? -errno : 0;
}

static int layer_open(const char *path, struct fuse_file_info *fi)
{
	int fd = openat(root_fd, rel(path), fi->flags & ~(O_TRUNC | O_CREAT | O_EXCL));
	if (fd < 0)
		return -errno;
	if (fi->flags & O_TRUNC) {
		int r = truncate_fd(fd, 0);
		if (r < 0) {
			close(fd);
			return r;
		}
	}
	fi->fh = (uint64_t)fd;
	return 0;
}

static int layer_create(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	pthread_mutex_lock(&lock);
	struct stat before;
	int existed = fstatat(root_fd, rel(path), &before, AT_SYMLINK_NOFOLLOW) == 0;
	int fd = openat(root_fd, rel(path), (fi->flags & ~O_TRUNC) | O_CREAT, mode);
	int r = fd < 0 ? -errno : 0;
	struct stat st;
	if (r == 0 && !existed && fstat(fd, &st) == 0)
		track(st.st_ino, 0)->created = 1;
	pthread_mutex_unlock(&lock);
	if (r == 0 && existed && (fi->flags & O_TRUNC))
		r = truncate_fd(fd, 0);
	if (r < 0) {
		if (fd >= 0)
			close(fd);
		return r;
	}
	fi->fh = (uint64_t)fd;
	return 0;
}

static int layer_read(const char *path, char *buf, size_t size, off_t off, struct fuse_file_info *fi)
{
	(void)path;
	slow_down();
	ssize_t n = pread((int)fi->fh, buf, size, off);
	return n < 0 ? -errno : (int)n;
}

static int layer_write(const char *path, const char *buf, size_t size, off_t off, struct fuse_file_info *fi)
{
	(void)path;
	slow_down();
	if (atomic_load(&disk_full))
		return -ENOSPC;
	int fd = (int)fi->fh;
	pthread_mutex_lock(&lock);
	int r = note_write(fd, off, size, fuse_get_context()->pid);
	if (r == 0) {
		ssize_t n = pwrite(fd, buf, size, off);
		r = n < 0 ? -errno : (int)n;
	}
	pthread_mutex_unlock(&lock);
	return r;
}

static int layer_statfs(const char *path, struct statvfs *st)
{
	(void)path;
	if (fstatvfs(root_fd, st) < 0)
		return -errno;
	if (atomic_load(&disk_full)) {
		st->f_bfree = 0;
		st->f_bavail = 0;
	}
	return 0;
}

static int layer_flush(const char *path, struct fuse_file_info *fi)
{
	(void)path;
	(void)fi;
	return 0;
}

static int layer_release(const char *path, struct fuse_file_info *fi)
{
	(void)path;
	close((int)fi->fh);
	return 0;
}

static int layer_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
	(void)path;
	if (atomic_load(&fsync_error))
		return -EIO;
	int fd = (int)fi->fh;
	if ((datasync ? fdatasync(fd) : fsync(fd)) < 0)
		return -errno;
	struct stat st;
	if (fstat(fd, &st) < 0)
		return -errno;
	pthread_mutex_lock(&lock);
	forget(st.st_ino);
	pthread_mutex_unlock(&lock);
	return 0;
}

static int layer_opendir(const char *path, struct fuse_file_info *fi)
{
	int fd = openat(root_fd, rel(path), O_RDONLY | O_DIRECTORY);
	if (fd < 0)
		return -errno;
	DIR *dir = fdopendir(fd);
	if (dir == NULL) {
		int e = errno;
		close(fd);
		return -e;
	}
	fi->fh = (uint64_t)(uintptr_t)dir;
	return 0;
}

static int layer_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off, struct fuse_file_info *fi,
			 enum fuse_readdir_flags flags)
{
	(void)path;
	(void)off;
	(void)flags;
	DIR *dir = (DIR *)(uintptr_t)fi->fh;
	rewinddir(dir);
	struct dirent *e;
	while ((e = readdir(dir)) != NULL) {
		struct stat st = { 0 };
		st.st_ino = e->d_ino;
		st.st_mode = (mode_t)(DTTOIF(e->d_type));
		if (fill(buf, e->d_name, &st, 0, 0))
			break;
	}
	return 0;
}

static int layer_releasedir(const char *path, struct fuse_file_info *fi)
{
	(void)path;
	closedir((DIR *)(uintptr_t)fi->fh);
	return 0;
}

/* Fsyncing a directory makes the files created in it durable (their content stays as it was). */
static int layer_fsyncdir(const char *path, int datasync, struct fuse_file_info *fi)
{
	(void)path;
	(void)datasync;
	if (atomic_load(&fsync_error))
		return -EIO;
	int fd = openat(dirfd((DIR *)(uintptr_t)fi->fh), ".", O_RDONLY | O_DIRECTORY);
	if (fd < 0)
		return -errno;
	fsync(fd);
	DIR *dir = fdopendir(fd);
	if (dir == NULL) {
		close(fd);
		return -EIO;
	}
	pthread_mutex_lock(&lock);
	struct dirent *e;
	while ((e = readdir(dir)) != NULL) {
		struct pending *p = find_pending(e->d_ino);
		if (p != NULL)
			p->created = 0;
	}
	pthread_mutex_unlock(&lock);
	closedir(dir);
	return 0;
}

static const struct fuse_operations layer_ops = {
	.init = layer_init,
	.getattr = layer_getattr,
	.access = layer_access,
	.readlink = layer_readlink,
	.mknod = layer_mknod,
	.mkdir = layer_mkdir,
	.unlink = layer_unlink,
	.rmdir = layer_rmdir,
	.symlink = layer_symlink,
	.rename = layer_rename,
	.link = layer_link,
	.chmod = layer_chmod,
	.chown = layer_chown,
	.truncate = layer_truncate,
	.utimens = layer_utimens,
	.open = layer_open,
	.create = layer_create,
	.read = layer_read,
	.write = layer_write,
	.statfs = layer_statfs,
	.flush = layer_flush,
	.release = layer_release,
	.fsync = layer_fsync,
	.opendir = layer_opendir,
	.readdir = layer_readdir,
	.releasedir = layer_releasedir,
	.fsyncdir = layer_fsyncdir,
};

static int on_off(const char *arg, atomic_int *flag)
{
	if (strcmp(arg, "on") == 0)
		atomic_store(flag, 1);
	else if (strcmp(arg, "off") == 0)
		atomic_store(flag, 0);
	else
		return -1;
	return 0;
}

static void answer(const char *line, char *reply, size_t size)
{
	if (strcmp(line, "ping") == 0) {
		snprintf(reply, size, "ok\n");
	} else if (strcmp(line, "status") == 0) {
		pthread_mutex_lock(&lock);
		size_t pending = pending_count;
		pthread_mutex_unlock(&lock);
		snprintf(reply, size, "ok pending=%zu fsync-error=%s full=%s slow=%d\n", pending,
			 atomic_load(&fsync_error) ? "on" : "off", atomic_load(&disk_full) ? "on" : "off",
			 atomic_load(&slow_ms));
	} else if (strcmp(line, "drop-unfsynced") == 0 || strncmp(line, "torn-write ", 11) == 0) {
		struct drop_mode mode = { 0, 0, 0 };
		if (line[0] == 't') {
			char *end;
			errno = 0;
			mode.torn = 1;
			mode.seed = strtoull(line + 11, &end, 10);
			int seeded = errno == 0 && end != line + 11 && line[11] != '-';
			if (seeded && strcmp(end, " byte") == 0)
				mode.in_sector = 1;
			else if (!seeded || (*end != '\0' && strcmp(end, " sector") != 0)) {
				snprintf(reply, size,
					 "error torn-write takes a seed from 0 to 2^64-1, then sector (the default) or byte\n");
				return;
			}
		}
		struct drop_counts c = drop_unfsynced(&mode);
		char torn[32] = "";
		if (mode.torn)
			snprintf(torn, sizeof torn, " torn=%d", c.torn);
		if (c.failed > 0)
			snprintf(reply, size, "error restored=%d removed=%d%s failed=%d\n", c.restored, c.removed,
				 torn, c.failed);
		else
			snprintf(reply, size, "ok restored=%d removed=%d%s\n", c.restored, c.removed, torn);
	} else if (strncmp(line, "fsync-error ", 12) == 0 && on_off(line + 12, &fsync_error) == 0) {
		snprintf(reply, size, "ok\n");
	} else if (strncmp(line, "full ", 5) == 0 && on_off(line + 5, &disk_full) == 0) {
		snprintf(reply, size, "ok\n");
	} else if (strncmp(line, "slow ", 5) == 0) {
		char *end;
		long ms = strtol(line + 5, &end, 10);
		if (*end != '\0' || ms < 0 || ms > 60000)
			snprintf(reply, size, "error slow takes 0 to 60000 ms\n");
		else {
			atomic_store(&slow_ms, (int)ms);
			snprintf(reply, size, "ok\n");
		}
	} else {
		snprintf(reply, size, "error unknown command: %.64s\n", line);
	}
}

static void serve(int conn)
{
	char line[MAX_LINE];
	size_t used = 0;
	for (;;) {
		ssize_t n = read(conn, line + used, sizeof line - 1 - used);
		if (n <= 0)
			return;
		used += (size_t)n;
		line[used] = '\0';
		char *nl;
		while ((nl = strchr(line, '\n')) != NULL) {
			*nl = '\0';
			char reply[MAX_LINE];
			answer(line, reply, sizeof reply);
			if (write(conn, reply, strlen(reply)) < 0)
				return;
			size_t rest = used - (size_t)(nl + 1 - line);
			memmove(line, nl + 1, rest);
			used = rest;
			line[used] = '\0';
		}
		if (used == sizeof line - 1)
			return;
	}
}

static void *control_loop(void *arg)
{
	int sock = (int)(intptr_t)arg;
	for (;;) {
		int conn = accept(sock, NULL, NULL);
		if (conn < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			return NULL;
		}
		serve(conn);
		close(conn);
	}
}

static int listen_on(const char *path)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	if (strlen(path) >= sizeof addr.sun_path) {
		fprintf(stderr, "mallory-disk: socket path too long: %s\n", path);
		return -1;
	}
	strcpy(addr.sun_path, path);
	unlink(path);
	int sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (sock < 0 || bind(sock, (struct sockaddr *)&addr, sizeof addr) < 0 || listen(sock, 16) < 0) {
		perror("mallory-disk: control socket");
		return -1;
	}
	return sock;
}

static int ask(const char *path, const char *line)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	if (strlen(path) >= sizeof addr.sun_path || strlen(line) + 2 > MAX_LINE) {
		fprintf(stderr, "mallory-disk: socket path or command too long\n");
		return 2;
	}
	strcpy(addr.sun_path, path);
	int sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (sock < 0 || connect(sock, (struct sockaddr *)&addr, sizeof addr) < 0) {
		perror("mallory-disk: connect");
		return 1;
	}
	char out[MAX_LINE];
	size_t len = (size_t)snprintf(out, sizeof out, "%s\n", line);
	if (write(sock, out, len) != (ssize_t)len) {
		perror("mallory-disk: write");
		close(sock);
		return 1;
	}
	char reply[MAX_LINE];
	size_t used = 0;
	while (used < sizeof reply - 1) {
		ssize_t n = read(sock, reply + used, sizeof reply - 1 - used);
		if (n <= 0)
			break;
		used += (size_t)n;
		if (memchr(reply, '\n', used) != NULL)
			break;
	}
	close(sock);
	reply[used] = '\0';
	char *nl = strchr(reply, '\n');
	if (nl == NULL) {
		fprintf(stderr, "mallory-disk: no answer to \"%s\"\n", line);
		return 1;
	}
	*nl = '\0';
	printf("%s\n", reply);
	return 0;
}

int main(int argc, char *argv[])
{
	if (argc == 4 && strcmp(argv[1], "--ask") == 0)
		return ask(argv[2], argv[3]);
	if (argc != 4) {
		fprintf(stderr, "usage: %s BACKING MOUNTPOINT SOCKET | %s --ask SOCKET LINE\n", argv[0], argv[0]);
		return 2;
	}
	root_fd = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (root_fd < 0) {
		perror(argv[1]);
		return 2;
	}
	struct fuse_args args = FUSE_ARGS_INIT(0, NULL);
	if (fuse_opt_add_arg(&args, argv[0]) != 0 || fuse_opt_add_arg(&args, "-o") != 0 ||
	    fuse_opt_add_arg(&args, "fsname=mallory-disk,subtype=mallory-disk") != 0)
		return 1;
	struct fuse *fuse = fuse_new(&args, &layer_ops, sizeof layer_ops, NULL);
	if (fuse == NULL)
		return 1;
	if (fuse_mount(fuse, argv[2]) != 0) {
		fuse_destroy(fuse);
		return 1;
	}
	int status = 1;
	if (fuse_set_signal_handlers(fuse_get_session(fuse)) == 0) {
		int sock = listen_on(argv[3]);
		pthread_t control;
		if (sock >= 0 && pthread_create(&control, NULL, control_loop, (void *)(intptr_t)sock) == 0) {
			printf("mallory-disk: %s mounted over %s, commands on %s\n", argv[1], argv[2], argv[3]);
			fflush(stdout);
			status = fuse_loop_mt(fuse, 0) == 0 ? 0 : 1;
		}
		fuse_remove_signal_handlers(fuse_get_session(fuse));
		unlink(argv[3]);
	}
	fuse_unmount(fuse);
	fuse_destroy(fuse);
	fuse_opt_free_args(&args);
	return status;
}

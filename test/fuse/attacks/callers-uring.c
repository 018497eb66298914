// An io_uring UNLINKAT of an open file, run by an io-wq worker that the kernel created from a
// task_work while its submitting thread was returning from rename(2): the worker's saved registers
// (and so /proc/TID/syscall) are a copy of that thread's, and name `rename` (82) for good.
// usage: callers-uring VICTIM FIFO1 FIFO2 RENAME_SRC RENAME_DST
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/io_uring.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

static int ring;
static unsigned *sq_tail, *sq_mask, *sq_array, *cq_head, *cq_tail, *cq_mask;
static struct io_uring_sqe *sqes;
static struct io_uring_cqe *cqes;
static long results[8];
static int done[8];

static void die(const char *m) { perror(m); exit(2); }

static void setup(void) {
  struct io_uring_params p;
  memset(&p, 0, sizeof p);
  ring = syscall(__NR_io_uring_setup, 16, &p);
  if (ring < 0) die("io_uring_setup");
  size_t sl = p.sq_off.array + p.sq_entries * sizeof(unsigned);
  size_t cl = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
  if (cl > sl) sl = cl;
  char *sq = mmap(0, sl, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring, IORING_OFF_SQ_RING);
  if (sq == MAP_FAILED) die("mmap sq");
  char *cq = sq;
  if (!(p.features & IORING_FEAT_SINGLE_MMAP)) {
    cq = mmap(0, cl, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring, IORING_OFF_CQ_RING);
    if (cq == MAP_FAILED) die("mmap cq");
  }
  sq_tail = (unsigned *)(sq + p.sq_off.tail);
  sq_mask = (unsigned *)(sq + p.sq_off.ring_mask);
  sq_array = (unsigned *)(sq + p.sq_off.array);
  cq_head = (unsigned *)(cq + p.cq_off.head);
  cq_tail = (unsigned *)(cq + p.cq_off.tail);
  cq_mask = (unsigned *)(cq + p.cq_off.ring_mask);
  cqes = (struct io_uring_cqe *)(cq + p.cq_off.cqes);
  sqes = mmap(0, p.sq_entries * sizeof(struct io_uring_sqe), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring, IORING_OFF_SQES);
  if (sqes == MAP_FAILED) die("mmap sqes");
}

static void submit_x(int op, const char *path, int flags, unsigned long ud, int fd, int sqflags, void *buf, unsigned len, int enter) {
  unsigned tail = *sq_tail, idx = tail & *sq_mask;
  struct io_uring_sqe *s = &sqes[idx];
  memset(s, 0, sizeof *s);
  s->opcode = op;
  s->fd = fd;
  s->addr = path ? (unsigned long)path : (unsigned long)buf;
  if (op == IORING_OP_OPENAT) s->open_flags = flags;
  else if (op == IORING_OP_UNLINKAT) s->unlink_flags = flags;
  else s->len = len;
  s->flags = sqflags;
  s->user_data = ud;
  sq_array[idx] = idx;
  __atomic_store_n(sq_tail, tail + 1, __ATOMIC_RELEASE);
  if (enter && syscall(__NR_io_uring_enter, ring, enter, 0, 0, NULL, 0) != enter) die("io_uring_enter");
}
static void submit(int op, const char *path, int flags, unsigned long ud) {
  submit_x(op, path, flags, ud, AT_FDCWD, IOSQE_ASYNC, NULL, 0, 1);
}

static void reap(int wait) {
  for (;;) {
    unsigned head = *cq_head;
    while (head != __atomic_load_n(cq_tail, __ATOMIC_ACQUIRE)) {
      struct io_uring_cqe *c = &cqes[head & *cq_mask];
      if (c->user_data < 8) { results[c->user_data] = c->res; done[c->user_data] = 1; }
      head++;
    }
    __atomic_store_n(cq_head, head, __ATOMIC_RELEASE);
    if (!wait || done[wait]) return;
    syscall(__NR_io_uring_enter, ring, 0, 1, IORING_ENTER_GETEVENTS, NULL, 0);
  }
}

static void max_workers(unsigned n) {
  unsigned v[2] = {n, n};
  if (syscall(__NR_io_uring_register, ring, IORING_REGISTER_IOWQ_MAX_WORKERS, v, 2) < 0) die("max workers");
}

static const char *fifo1;
static int pipe_w = -1;
static void *waker(void *arg) {
  (void)arg;
  usleep(300 * 1000);
  if (pipe_w >= 0) { if (write(pipe_w, "x", 1) != 1) perror("write"); return NULL; }
  int fd = open(fifo1, O_WRONLY);
  if (fd >= 0) close(fd);
  return NULL;
}

static void show_threads(void) {
  DIR *d = opendir("/proc/self/task");
  struct dirent *e;
  while ((e = readdir(d))) {
    if (e->d_name[0] == '.') continue;
    char p[320], comm[64] = "", sc[128] = "";
    snprintf(p, sizeof p, "/proc/self/task/%s/comm", e->d_name);
    FILE *f = fopen(p, "r");
    if (f) { if (!fgets(comm, sizeof comm, f)) comm[0] = 0; fclose(f); }
    comm[strcspn(comm, "\n")] = 0;
    snprintf(p, sizeof p, "/proc/self/task/%s/syscall", e->d_name);
    f = fopen(p, "r");
    if (f) { if (!fgets(sc, sizeof sc, f)) sc[0] = 0; fclose(f); }
    sc[strcspn(sc, " \n")] = 0;
    printf("thread %s %s syscall=%s\n", e->d_name, comm, sc);
  }
  closedir(d);
}

int main(int argc, char **argv) {
  if (argc != 6) { fprintf(stderr, "usage\n"); return 2; }
  const char *victim = argv[1], *fifo2 = argv[3];
  fifo1 = argv[2];
  // URING_WRITER: the victim is held open for writing, and written after the unlink answered.
  int writer = getenv("URING_WRITER") != NULL;
  int held = open(victim, writer ? O_RDWR : O_RDONLY);
  if (held < 0) die("open victim");
  setup();
  if (getenv("URING_LINK")) {
    // The plainer way: a pipe read (armed for poll, no worker) linked to the UNLINKAT. The read
    // completes in task_work as this thread returns from rename(2); the UNLINKAT is queued to io-wq
    // there, and its first worker is created right there, with this thread's registers.
    int p[2];
    static char buf[8];
    if (pipe(p)) die("pipe");
    pipe_w = p[1];
    submit_x(IORING_OP_READ, NULL, 0, 1, p[0], IOSQE_IO_LINK, buf, 1, 0);
    submit_x(IORING_OP_UNLINKAT, victim, 0, 2, AT_FDCWD, 0, NULL, 0, 2);
    pthread_t t;
    pthread_create(&t, NULL, waker, NULL);
    int r = rename(argv[4], argv[5]);
    printf("rename %d %s\n", r, r ? strerror(errno) : "ok");
    pthread_join(t, NULL);
    usleep(200 * 1000);
    show_threads();
    reap(2);
    printf("unlinkat %ld %s\n", results[2], results[2] < 0 ? strerror((int)-results[2]) : "ok");
    if (writer && pwrite(held, "written-after-rm", 16, 0) != 16) perror("pwrite");
    if (close(held)) perror("close");
    printf("done\n");
    return 0;
  }
  max_workers(1);
  submit(IORING_OP_OPENAT, fifo1, O_RDONLY, 1); // worker 1, created in io_uring_enter, blocks
  usleep(100 * 1000);
  submit(IORING_OP_OPENAT, fifo2, O_RDONLY, 3); // queued: at the limit
  submit(IORING_OP_UNLINKAT, victim, 0, 2);    // queued
  max_workers(2);
  pthread_t t;
  pthread_create(&t, NULL, waker, NULL);
  // Worker 1 finishes A, blocks in C with B queued: it asks this thread (task_work) for a worker,
  // which is created as this thread returns from the rename.
  int r = rename(argv[4], argv[5]);
  printf("rename %d %s\n", r, r ? strerror(errno) : "ok");
  pthread_join(t, NULL);
  usleep(200 * 1000);
  show_threads();
  reap(2);
  printf("unlinkat %ld %s\n", results[2], results[2] < 0 ? strerror((int)-results[2]) : "ok");
  fflush(stdout);
  int fd = open(fifo2, O_WRONLY);
  if (fd >= 0) close(fd);
  reap(3);
  close(held);
  printf("done\n");
  return 0;
}

// Invented, against the supervisor/worker split: the worker's control socket
// is fd 3; pass the supervisor a descriptor (SCM_RIGHTS) and a fake "done"
// byte on it, hoping to confuse its reads or to leave it a descriptor. The
// supervisor believes nothing but the timing of a real "done": bytes it did
// not ask for are a protocol violation.
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>

void scale_add(const float* x, float* y, int64_t n, float a) {
  for (int64_t i = 0; i < n; ++i) y[i] = a * x[i] + 1.0f;
  char done = 'D';
  iovec data{&done, 1};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr message{};
  message.msg_iov = &data;
  message.msg_iovlen = 1;
  message.msg_control = control;
  message.msg_controllen = sizeof control;
  cmsghdr* header = CMSG_FIRSTHDR(&message);
  header->cmsg_level = SOL_SOCKET;
  header->cmsg_type = SCM_RIGHTS;
  header->cmsg_len = CMSG_LEN(sizeof(int));
  const int fd = 1;
  std::memcpy(CMSG_DATA(header), &fd, sizeof fd);
  sendmsg(3, &message, 0);
}

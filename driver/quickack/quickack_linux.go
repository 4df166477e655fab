package quickack

import "golang.org/x/sys/unix"

func (c Conn) set() {
	if raw, err := c.SyscallConn(); err == nil {
		raw.Control(func(fd uintptr) {
			unix.SetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_QUICKACK, 1)
		})
	}
}

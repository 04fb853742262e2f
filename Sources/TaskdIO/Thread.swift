#if canImport(Glibc)
    import Glibc
#endif

/// A detached POSIX thread for blocking work that must not sit on the cooperative pool.
public enum Thread {
    private final class Box {
        let body: () -> Void
        init(_ body: @escaping () -> Void) { self.body = body }
    }

    public static func detach(_ body: @escaping @Sendable () -> Void) {
        let box = Unmanaged.passRetained(Box(body)).toOpaque()
        var thread = pthread_t()
        let rc = pthread_create(
            &thread, nil,
            { raw in
                let box = Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue()
                box.body()
                return nil
            }, box)
        if rc == 0 { pthread_detach(thread) } else { Unmanaged<Box>.fromOpaque(box).release() }
    }
}

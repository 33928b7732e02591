package dev.ticketd.client;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;

/** Waiting on the client's background work, and the daemon threads it runs on. */
final class Futures {
  private Futures() {}

  /** The future's value; its failure rethrown as it was (a TicketdException), or wrapped in LeaseFailedException. */
  static <T> T await(CompletableFuture<T> future) {
    try {
      return future.get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new LeaseFailedException("interrupted while waiting for ticketd", java.util.List.of(), e);
    } catch (ExecutionException e) {
      throw rethrow(e.getCause());
    }
  }

  /** A failure from another thread, as the caller should see it. */
  static RuntimeException rethrow(Throwable cause) {
    if (cause instanceof java.util.concurrent.CompletionException && cause.getCause() != null) cause = cause.getCause();
    if (cause instanceof RuntimeException) return (RuntimeException) cause;
    if (cause instanceof Error) throw (Error) cause;
    return new LeaseFailedException(String.valueOf(cause), java.util.List.of(), cause);
  }

  /** A cached pool of daemon threads named after their owner: a forgotten client never keeps the JVM alive. */
  static ExecutorService daemonPool(String name) {
    AtomicInteger count = new AtomicInteger();
    ThreadFactory factory = task -> {
      Thread thread = new Thread(task, name + "-" + count.incrementAndGet());
      thread.setDaemon(true);
      return thread;
    };
    return Executors.newCachedThreadPool(factory);
  }
}

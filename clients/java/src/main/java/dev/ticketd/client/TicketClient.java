package dev.ticketd.client;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import javax.net.ssl.SSLContext;

/**
 * A client of one ticketd sequence: leases whole blocks ({@code POST /v1/sequences/{name}/blocks})
 * and hands their IDs out in-process, without a network call while a block is buffered. A block is
 * leased to one client and used once, so IDs never repeat within or across processes; a crash loses
 * the rest of the block, which only leaves a gap. Thread-safe: any number of threads may call
 * {@link #next()}.
 *
 * <p>A strict sequence has no blocks (409 TICKETD_STRICT_NO_BLOCKS): its IDs come from ticketd each
 * time, concurrent calls coalesced into the next request, and {@link #nextNow()} throws.
 *
 * <p>{@link #close()} gives the unused IDs of blocks ticketd leased with a {@code lease} back (opaque
 * sequences, ordered ones created with reuse), once, within {@code giveBackTimeout}.
 */
public final class TicketClient implements AutoCloseable {
  /** Most blocks a client leases ahead of use. */
  static final int MAX_BLOCKS_AHEAD = 32;
  /** Opaque IDs encoded in one pass: one pass costs about as much for one ID as for hundreds. */
  static final int ENCODE_CHUNK = 2048;
  /** Per-request timeout of a strict sequence when the builder gives none: above a leader change (3 s). */
  static final Duration STRICT_TIMEOUT = Duration.ofMillis(5000);

  /** A leased block: IDs first .. first + size − 1; from index prefetchAt on, the next one is leased; lease (or null) gives it back. */
  private static final class Block {
    final long first;
    final long size;
    final long prefetchAt;
    final String lease;

    Block(long first, long size, long prefetchAt, String lease) {
      this.first = first;
      this.size = size;
      this.prefetchAt = prefetchAt;
      this.lease = lease;
    }

    BlockReturns.Tail tailFrom(long pos) {
      return BlockReturns.Tail.of(lease, first, size, pos);
    }
  }

  /**
   * IDs handed out on the hot path: {@code first + i} (or {@code ids[i]}, encoded) for each i below
   * size, claimed by one atomic increment. A new run replaces it; a thread still on the old one
   * finds it used up and takes the lock.
   */
  private static final class Run {
    final long first;
    final long[] ids;
    final long size;
    final AtomicLong taken = new AtomicLong();

    Run(long first, long[] ids, long size) {
      this.first = first;
      this.ids = ids;
      this.size = size;
    }
  }

  private static final Run EMPTY = new Run(0, null, 0);

  private final String sequence;
  private final Requests requests;
  /** A strict sequence's requests wait longer (above a leader change): made when the sequence turns out strict. */
  private final java.util.function.Supplier<Requests> strictRequests;
  private final double prefetchRatio;
  private final boolean ordered;
  private final boolean unsignedIds;
  private final ExecutorService executor;
  private final Duration giveBackTimeout;
  private final Consumer<TicketClientEvent> emit;

  private volatile Run current = EMPTY;
  /** Guards everything below: the blocks buffered, the block being cut into runs, the leases in flight. */
  private final ReentrantLock lock = new ReentrantLock();
  /** Signalled whenever a lease ends, for close(). */
  private final Condition leasesEnded = lock.newCondition();
  private final ArrayDeque<Block> blocks = new ArrayDeque<>();
  private Block block;
  private long blockPos;
  private boolean toppedUp;
  // Leases in flight, and how many blocks to keep ahead: doubled whenever next() had to wait, so a
  // fast consumer ends up with enough blocks buffered to cover a lease's round trip.
  private int inFlight;
  private int ahead = 1;
  private CompletableFuture<Void> waiter;
  private volatile boolean closed;
  /** Blocks whose lease ended after close(), given back with the rest; null once close() has taken them. */
  private List<BlockReturns.Tail> lateTails = new ArrayList<>();
  /** The URL that answered last: leases start there. */
  private volatile int preferred;
  /** Set once, with the first opaque block (unless ordered): the permutation the blocks are encoded with. */
  private volatile IdPermutation encoder;
  /** Set once ticketd answered that the sequence is strict: every ID is asked for from then on. */
  private volatile StrictIds strict;
  private IdCodec codec;

  private TicketClient(Builder b) {
    this.sequence = b.sequence;
    this.prefetchRatio = b.prefetchBelowRatio;
    this.ordered = b.ordered;
    this.unsignedIds = b.unsignedIds;
    this.giveBackTimeout = b.giveBackTimeout;
    Consumer<TicketClientEvent> onEvent = b.onEvent;
    this.emit = onEvent == null ? event -> {} : onEvent;
    this.executor = Futures.daemonPool("ticketd-" + b.sequence);
    this.requests = new Requests(b.urls, b.token, b.timeout, b.sslContext, executor);
    List<String> urls = b.urls;
    String token = b.token;
    Duration strictTimeout = b.timeout == null ? STRICT_TIMEOUT : b.timeout;
    SSLContext ssl = b.sslContext;
    this.strictRequests = () -> new Requests(urls, token, strictTimeout, ssl, executor);
  }

  /** A builder; {@code urls} and {@code sequence} are required. */
  public static Builder builder() {
    return new Builder();
  }

  /** The next ID; waits for a lease only when no block is buffered (for a strict sequence: asks ticketd each time). */
  public long next() {
    Run run = current;
    long i = run.taken.getAndIncrement();
    if (i < run.size) return run.ids == null ? run.first + i : run.ids[(int) i];
    return slow(true);
  }

  /** The next ID without waiting; throws NoBufferedIdsException when no block is buffered, StrictSequenceException for a strict sequence. */
  public long nextNow() {
    Run run = current;
    long i = run.taken.getAndIncrement();
    if (i < run.size) return run.ids == null ? run.first + i : run.ids[(int) i];
    return slow(false);
  }

  /** {@code count} IDs, in the order handed out (a strict sequence's in requests of up to 1,000). */
  public long[] nextBatch(int count) {
    StrictIds s = strict;
    if (s != null) return s.batch(count);
    long[] ids = new long[count];
    for (int i = 0; i < count; i++) ids[i] = next();
    return ids;
  }

  /** The sequence's codec; for an opaque sequence it fetches the key (needs the sequence's own client token). */
  public IdCodec codec() {
    synchronized (requests) {
      if (codec == null) codec = CodecFetch.fetch(requests, sequence);
      return codec;
    }
  }

  /** The sequence's name. */
  public String sequence() {
    return sequence;
  }

  /**
   * Stops prefetching and gives the unused IDs of the blocks in hand back (those leased with a
   * {@code lease}), once, within {@code giveBackTimeout}; the rest are given up (a gap). Waits for the leases
   * in flight to end (within the same time when giving back). Calls after it throw LeaseFailedException.
   */
  @Override
  public void close() {
    List<BlockReturns.Tail> tails;
    lock.lock();
    try {
      if (closed) return;
      closed = true;
      tails = unusedTails();
      blocks.clear();
      block = null;
      current = EMPTY;
    } finally {
      lock.unlock();
    }
    long deadline = System.nanoTime() + giveBackTimeout.toNanos();
    boolean givingBack = giveBackTimeout.toNanos() > 0;
    StrictIds s = strict;
    if (s != null) s.close();
    lock.lock();
    try {
      awaitLeases(givingBack ? deadline : Long.MAX_VALUE);
      tails.addAll(lateTails);
      lateTails = null;
    } finally {
      lock.unlock();
    }
    if (givingBack) BlockReturns.giveBack(requests, preferred, sequence, tails, deadline, emit);
    executor.shutdown();
  }

  /**
   * The unused IDs of the block in hand and of every block buffered. Threads still on the current run
   * after this find it used up: its counter is set to its end, and what they drew before stays theirs.
   * Holds the lock.
   */
  private List<BlockReturns.Tail> unusedTails() {
    List<BlockReturns.Tail> tails = new ArrayList<>();
    Run run = current;
    if (block != null && run != EMPTY) {
      long used = Math.min(run.taken.getAndSet(run.size), run.size);
      BlockReturns.Tail tail = block.tailFrom(blockPos - run.size + used);
      if (tail != null) tails.add(tail);
    }
    for (Block b : blocks) {
      BlockReturns.Tail tail = b.tailFrom(0);
      if (tail != null) tails.add(tail);
    }
    return tails;
  }

  /** Waits until no lease is in flight, or until the deadline (System.nanoTime(); MAX_VALUE: none). Holds the lock. */
  private void awaitLeases(long deadlineNanos) {
    try {
      while (inFlight > 0) {
        if (deadlineNanos == Long.MAX_VALUE) leasesEnded.await();
        // A lease still running at the deadline is given up: its block, when it comes, is dropped.
        else if (leasesEnded.awaitNanos(deadlineNanos - System.nanoTime()) <= 0) return;
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private long slow(boolean wait) {
    boolean counted = false;
    for (;;) {
      StrictIds s = strict;
      if (s != null) {
        if (!wait) throw s.refusal();
        return s.next();
      }
      CompletableFuture<Void> lease;
      lock.lock();
      try {
        if (closed) throw new LeaseFailedException("client is closed");
        Run run = current;
        long i = run.taken.getAndIncrement();
        if (i < run.size) return run.ids == null ? run.first + i : run.ids[(int) i];
        if (cutRun()) continue;
        if (!wait) throw new NoBufferedIdsException("no block of " + sequence + " is buffered yet");
        if (!counted && inFlight > 0) ahead = Math.min(MAX_BLOCKS_AHEAD, ahead * 2);
        counted = true;
        lease = inFlight > 0 ? waiter : refill();
      } finally {
        lock.unlock();
      }
      try {
        Futures.await(lease);
      } catch (LeaseFailedException e) {
        if (!becameStrict(e)) throw e;
      }
    }
  }

  /**
   * Makes the next run of IDs current: the rest of the block up to its prefetch point, then the rest
   * of it (leasing ahead at that point, while the block still has a share left); for an opaque
   * sequence, a chunk at a time, encoded. False when no block is buffered. Holds the lock.
   */
  private boolean cutRun() {
    if (block == null || blockPos >= block.size) {
      Block next = blocks.poll();
      if (next == null) return false;
      block = next;
      blockPos = 0;
      toppedUp = false;
    }
    long limit = block.prefetchAt;
    if (blockPos >= limit) {
      if (!toppedUp) topUp();
      toppedUp = true;
      limit = block.size;
    }
    long n = limit - blockPos;
    IdPermutation enc = encoder;
    if (enc == null) {
      current = new Run(block.first + blockPos, null, n);
      blockPos = limit;
      return true;
    }
    int chunk = (int) Math.min(n, ENCODE_CHUNK);
    long[] out = new long[chunk];
    enc.encodeRun(block.first + blockPos, chunk, out, 0);
    current = new Run(0, out, chunk);
    blockPos += chunk;
    return true;
  }

  /** Whether a lease's failure says the sequence is strict; then every ID is asked for from here on. */
  private boolean becameStrict(LeaseFailedException error) {
    if (!error.codes().contains(StrictIds.STRICT_NO_BLOCKS)) return false;
    lock.lock();
    try {
      if (strict == null) strict = new StrictIds(strictRequests.get(), sequence, unsignedIds, executor);
    } finally {
      lock.unlock();
    }
    return true;
  }

  /** Leases one block in the background. Holds the lock. */
  private CompletableFuture<Void> refill() {
    inFlight++;
    CompletableFuture<Void> leased = CompletableFuture.supplyAsync(this::lease, executor).handle((got, error) -> {
      lock.lock();
      try {
        inFlight--;
        leasesEnded.signalAll();
        if (error == null && !closed) blocks.add(got);
        // Leased after close(): nobody will take from it, so it is given back with the rest (if in time).
        else if (error == null && lateTails != null) {
          BlockReturns.Tail tail = got.tailFrom(0);
          if (tail != null) lateTails.add(tail);
        }
      } finally {
        lock.unlock();
      }
      if (error != null) throw Futures.rethrow(error);
      return null;
    });
    waiter = leased;
    return leased;
  }

  /** Leases ahead until enough blocks are buffered or on their way. Holds the lock. */
  private void topUp() {
    while (!closed && blocks.size() + inFlight < ahead) refill();
  }

  /**
   * Why a block answer's {@code ids} cannot be trusted: a mode this version does not know, or (from
   * a server too old to send it, or one that misreads the sequence) not opaque for a sequence known to be.
   */
  private String misreadMode(String ids) {
    if (ids != null && !ids.equals("ordered") && !ids.equals("opaque")) return "block answer has ids \"" + ids + "\", unknown to this version; upgrade the ticketd Java client";
    if (encoder != null && !"opaque".equals(ids)) return "sequence " + sequence + " is opaque, but this ticketd leased it as " + (ids == null ? "a sequence without ids" : ids) + ": upgrade that ticketd";
    return null;
  }

  private Block lease() {
    String path = "/v1/sequences/" + Requests.segment(sequence) + "/blocks";
    // Leases run concurrently: each walks the URLs from where it started, once each.
    Requests.Answered<Map<String, Object>> answered = requests.askInTurn(preferred, "no ticketd leased a block of " + sequence, url -> {
      Requests.Attempt<Map<String, Object>> leased = requests.postJson(url + path, null, b -> b.get("first") instanceof String && b.get("last") instanceof String);
      if (!leased.ok()) return leased;
      String ids = Requests.string(leased.value, "ids");
      String misread = misreadMode(ids);
      if (misread != null) return Requests.Attempt.failed(misread, false, null);
      // The key comes with the first opaque block; not getting it counts against this URL.
      if ("opaque".equals(ids) && !ordered) loadEncoder();
      return leased;
    });
    // Stick with a URL that answers; move on from one that did not.
    preferred = answered.index;
    String firstText = Requests.string(answered.value, "first");
    String lastText = Requests.string(answered.value, "last");
    long first = Long.parseUnsignedLong(firstText);
    long last = Long.parseUnsignedLong(lastText);
    IdPermutation enc = encoder;
    if (!unsignedIds && enc != null && enc.maxId() < 0) throw Ids.aboveLong(Ids.toString(enc.maxId()) + " (the domain's maxId)", sequence);
    if (!unsignedIds && last < 0) throw Ids.aboveLong(lastText, sequence);
    long size = last - first + 1;
    long perMille = Math.round(prefetchRatio * 1000);
    // size · perMille / 1000, exactly and without overflow: (1000q + r) · p / 1000 = q · p + r · p / 1000.
    long keep = size / 1000 * perMille + size % 1000 * perMille / 1000;
    return new Block(first, size, Math.max(0, size - 1 - keep), Requests.string(answered.value, "lease"));
  }

  private void loadEncoder() {
    if (encoder != null) return;
    IdCodec found = codec();
    // The permutation behind the codec, shared: one key fetch per client.
    if (found instanceof IdCodec.Opaque) encoder = ((IdCodec.Opaque) found).permutation();
  }

  /** Options of a client. */
  public static final class Builder {
    private List<String> urls = List.of();
    private String sequence;
    private String token;
    private double prefetchBelowRatio = 0.5;
    private Duration timeout;
    private boolean ordered;
    private boolean unsignedIds;
    private SSLContext sslContext;
    private Duration giveBackTimeout = BlockReturns.DEFAULT_TIMEOUT;
    private Consumer<TicketClientEvent> onEvent;

    private Builder() {}

    /** ticketd base URLs (http:// or https://); a lease fails over from one to the next. */
    public Builder urls(String... urls) {
      return urls(Arrays.asList(urls));
    }

    public Builder urls(List<String> urls) {
      this.urls = List.copyOf(urls);
      return this;
    }

    public Builder sequence(String sequence) {
      this.sequence = sequence;
      return this;
    }

    /** Sent as a bearer token: a client token of the sequence (TICKETD_CLIENT_TOKENS), or a proxy's. */
    public Builder token(String token) {
      this.token = token;
      return this;
    }

    /** Lease the next block when fewer than this fraction of the current one is left (default 0.5). */
    public Builder prefetchBelowRatio(double ratio) {
      if (!(ratio >= 0 && ratio <= 1)) throw new IllegalArgumentException("prefetchBelowRatio must lie in [0, 1]; got " + ratio);
      this.prefetchBelowRatio = ratio;
      return this;
    }

    /** Per-request timeout (default 2 s; 5 s for a strict sequence, above a leader change). */
    public Builder timeout(Duration timeout) {
      this.timeout = timeout;
      return this;
    }

    /**
     * For an opaque sequence: hand out its ordered IDs instead (to store, B-tree friendly) and show
     * {@code codec().encode(id)}. Default false: the IDs handed out are the opaque ones, as ticketd serves them.
     */
    public Builder ordered(boolean ordered) {
      this.ordered = ordered;
      return this;
    }

    /** Take IDs above 2^63 − 1 as unsigned longs (see {@link Ids}); default false: they are refused (IdRangeException). */
    public Builder unsignedIds(boolean unsignedIds) {
      this.unsignedIds = unsignedIds;
      return this;
    }

    /** TLS for https:// URLs whose certificate is not in the JVM's trust store, or a client certificate. */
    public Builder sslContext(SSLContext sslContext) {
      this.sslContext = sslContext;
      return this;
    }

    /** How long {@code close()} may spend giving unused leased IDs back (default 1 s, as the Node client); {@code Duration.ZERO}: give nothing back. */
    public Builder giveBackTimeout(Duration giveBackTimeout) {
      if (giveBackTimeout.isNegative()) throw new IllegalArgumentException("giveBackTimeout must not be negative; got " + giveBackTimeout);
      this.giveBackTimeout = giveBackTimeout;
      return this;
    }

    /** Called with each event ({@code returned}, {@code return-failed}), from the thread that closes the client; it must not throw. */
    public Builder onEvent(Consumer<TicketClientEvent> onEvent) {
      this.onEvent = onEvent;
      return this;
    }

    /** The client; nothing is leased until the first ID is asked for. */
    public TicketClient build() {
      if (urls.isEmpty()) throw new LeaseFailedException("a TicketClient needs at least one ticketd URL");
      Objects.requireNonNull(sequence, "sequence");
      return new TicketClient(this);
    }
  }
}

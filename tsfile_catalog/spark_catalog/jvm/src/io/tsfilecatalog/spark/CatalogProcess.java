package io.tsfilecatalog.spark;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.lang.ref.WeakReference;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.Collections;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.WeakHashMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.spark.SparkConf;
import org.apache.spark.sql.SparkSession;
import py4j.ClientServer;
import py4j.ClientServerConnection;
import py4j.Py4JException;
import py4j.PythonClient;

/**
 * The catalog's Python side when no Python driver registered one ({@code spark-sql}, a Spark
 * Connect or Thrift server, a JVM job): a Python process this JVM starts on the first catalog
 * call, as Spark's {@code PythonRunner} starts {@code spark-submit app.py}.
 *
 * <p>A Py4J {@code ClientServer} on loopback with a fresh secret (what PySpark's {@code
 * launch_gateway} connects to from {@code PYSPARK_GATEWAY_PORT}/{@code PYSPARK_GATEWAY_SECRET});
 * the interpreter Spark's Python runner would pick; {@code python -m
 * tsfile_catalog.spark_catalog.process}, which wraps this JVM's session and hands back the same
 * delegate {@code tsfile_catalog.register} hands over ({@link #attach}). One per JVM, stopped
 * with it: a shutdown hook here, and the child exits when its stdin (a pipe from here) closes.
 * Its stdout and stderr go to a log file that every error names. Wiring only: the Python module
 * decides everything else.
 */
public final class CatalogProcess {
  /** The Python module the process runs. */
  static final String MODULE = "tsfile_catalog.spark_catalog.process";

  /** How long the process may take to start, in seconds (Spark conf). */
  static final String START_TIMEOUT = "spark.tsfile.catalogProcess.startTimeoutSeconds";

  /** Held while a process starts or is replaced: one start at a time. */
  private static final Object LOCK = new Object();
  private static volatile CatalogProcess current; // replaced under LOCK
  private static volatile CatalogProcess starting; // the one awaiting attach()
  private static boolean hooked; // guarded by LOCK

  private final String token;
  private final ClientServer server;
  private final Process process;
  private final Path log;
  private volatile boolean logNamed; // an error told the user of the log: kept at exit
  private final SparkSession session;
  private final CountDownLatch ready = new CountDownLatch(1);
  private volatile Delegate delegate;
  /**
   * The Py4J connection of each thread that called the process, with that thread (weakly).
   * Py4J's {@code ClientServer} opens a connection, a socket with a thread at each end, for each
   * Java thread that calls Python, and closes none; a Spark Connect server runs every operation
   * on a new thread, so each query would leave two sockets and two Python threads behind, until
   * the process ran out of files. Each is closed once its thread has ended ({@link #called}).
   */
  private final Map<ClientServerConnection, WeakReference<Thread>> callers =
      new ConcurrentHashMap<>();
  /** The sessions this process was told of, held weakly (a JDBC connection's ends with it). */
  private final Set<SparkSession> served =
      Collections.synchronizedSet(Collections.newSetFromMap(new WeakHashMap<>()));

  private CatalogProcess(
      String token, ClientServer server, Process process, Path log, SparkSession session) {
    this.token = token;
    this.server = server;
    this.process = process;
    this.log = log;
    this.session = session;
  }

  /**
   * The running process's delegate, starting the process first when none runs; the calling
   * session is announced to it first if it is new to this process ({@link #serveSession}).
   */
  static Delegate delegate() {
    CatalogProcess running = running();
    running.serveSession();
    return running.delegate;
  }

  private static CatalogProcess running() {
    CatalogProcess running = current;
    if (running != null && running.process.isAlive()) {
      return running;
    }
    synchronized (LOCK) {
      running = current;
      if (running != null && running.process.isAlive()) {
        return running;
      }
      if (running != null) {
        running.stop();
        current = null;
      }
      if (!hooked) {
        Runtime.getRuntime().addShutdownHook(new Thread(CatalogProcess::stopCurrent));
        hooked = true;
      }
      current = start();
      return current;
    }
  }

  /**
   * Calls the process's {@code serve_session} once per session (a Connect client's, a JDBC
   * connection's) on its first catalog call: the Python side prepares the session there (it
   * registers the tsfile source when the session lacks it). Once, not on every call: each
   * check is Python's calls back into this JVM, which cost as much as the load itself. A
   * broken-off call leaves the session to be announced again; the catalog call that follows
   * reports the failure.
   */
  private void serveSession() {
    SparkSession calling;
    try {
      calling = SparkSession.active(); // the thread's session, else the JVM's default one
    } catch (IllegalStateException e) {
      return;
    }
    if (!served.add(calling)) {
      return;
    }
    try {
      delegate.call("serve_session", "{}");
    } catch (Py4JException e) {
      served.remove(calling);
    }
  }

  /**
   * After a call to the process on this thread: the thread's connection is remembered, and when
   * it is new (a new thread's first call), those of threads that have ended are closed (the
   * Python side's thread of each ends with it).
   */
  static void called() {
    CatalogProcess running = current;
    // The gateway's client, not the server's own: PySpark's callback server start replaced it.
    if (running == null
        || !(running.server.getJavaServer().getGateway().getCallbackClient()
            instanceof PythonClient client)) {
      return;
    }
    ClientServerConnection connection = client.getPerThreadConnection();
    if (connection == null
        || running.callers.putIfAbsent(connection, new WeakReference<>(Thread.currentThread()))
            != null) {
      return;
    }
    running.callers.entrySet().removeIf(
        caller -> {
          Thread owner = caller.getValue().get();
          if (owner != null && owner.isAlive()) {
            return false;
          }
          caller.getKey().shutdown();
          return true;
        });
  }

  /** Called by the process, once it wraps this JVM's session: its delegate. */
  public static void attach(String token, Delegate value) {
    CatalogProcess waiting = starting;
    if (waiting != null && waiting.token.equals(token)) {
      waiting.delegate = value;
      waiting.ready.countDown();
    }
  }

  /** The session the starting process wraps (its SparkContext is this JVM's). */
  public static SparkSession session(String token) {
    CatalogProcess waiting = starting;
    if (waiting == null || !waiting.token.equals(token)) {
      throw new IllegalStateException("tsfile catalog process: unknown token");
    }
    return waiting.session;
  }

  /**
   * The one-line error for a call to {@code failed} that broke off ({@code cause}): when its
   * process has ended, it is forgotten, and the next call starts another.
   */
  static RuntimeException failed(Delegate failed, String operation, Py4JException cause) {
    CatalogProcess gone = current;
    if (gone == null || gone.delegate != failed) {
      return new IllegalStateException(
          "tsfile catalog: " + operation + " failed: " + firstLine(cause), cause);
    }
    boolean ended;
    try {
      ended = gone.process.waitFor(2, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      ended = !gone.process.isAlive();
    }
    if (!ended) {
      return new IllegalStateException(
          "tsfile catalog: " + operation + " failed in the catalog process (pid "
              + gone.process.pid() + ", log " + gone.namedLog() + "): " + firstLine(cause),
          cause);
    }
    synchronized (LOCK) {
      if (current == gone) {
        gone.stop();
        current = null;
      }
    }
    return new IllegalStateException(
        "tsfile catalog: its Python process (pid " + gone.process.pid() + ") exited with code "
            + gone.process.exitValue() + " during " + operation
            + "; the next statement starts a new one (log: " + gone.namedLog() + ")",
        cause);
  }

  private static String firstLine(Throwable cause) {
    String message = String.valueOf(cause.getMessage()).strip();
    int end = message.indexOf('\n');
    return end < 0 ? message : message.substring(0, end);
  }

  /** At the JVM's exit: the process stops, and its log goes unless an error named it. */
  private static void stopCurrent() {
    CatalogProcess running = current;
    if (running != null) {
      running.stop();
      if (!running.logNamed) {
        try {
          Files.deleteIfExists(running.log);
        } catch (IOException e) {
          // Left in the temporary directory, as before.
        }
      }
    }
  }

  /** The log's path, for an error's message: the log is then kept when the JVM exits. */
  private Path namedLog() {
    logNamed = true;
    return log;
  }

  private void stop() {
    process.destroy();
    try {
      if (!process.waitFor(5, TimeUnit.SECONDS)) {
        process.destroyForcibly();
      }
    } catch (InterruptedException e) {
      process.destroyForcibly();
      Thread.currentThread().interrupt();
    }
    server.shutdown();
  }

  private static CatalogProcess start() {
    SparkSession session =
        SparkSession.getDefaultSession().isDefined()
            ? SparkSession.getDefaultSession().get()
            : SparkSession.active();
    SparkConf conf = session.sparkContext().getConf();
    byte[] bytes = new byte[32];
    new SecureRandom().nextBytes(bytes);
    String secret = HexFormat.of().formatHex(bytes);
    String token = HexFormat.of().formatHex(bytes, 0, 8);
    ClientServer server =
        new ClientServer.ClientServerBuilder()
            .authToken(secret)
            .javaPort(0)
            .javaAddress(InetAddress.getLoopbackAddress())
            .autoStartJavaServer(false)
            .build();
    // Py4J's server thread (and each connection's, which inherit it) must be a daemon, or a
    // JVM job's JVM would outlive its main(): this daemon thread runs the server itself.
    Thread serving = new Thread(() -> server.startServer(false), "tsfile-catalog-gateway");
    serving.setDaemon(true);
    serving.start();
    int port = listeningPort(server);
    String python = python(conf);
    Path log;
    Process process;
    try {
      log = Files.createTempFile("tsfile-catalog-process-", ".log");
      ProcessBuilder builder = new ProcessBuilder(List.of(python, "-m", MODULE));
      Map<String, String> env = builder.environment();
      env.put("PYSPARK_GATEWAY_PORT", Integer.toString(port));
      env.put("PYSPARK_GATEWAY_SECRET", secret);
      env.put("PYSPARK_PIN_THREAD", "true"); // the ClientServer above
      env.put("TSFILE_CATALOG_PROCESS_TOKEN", token);
      env.put("PYTHONUNBUFFERED", "YES");
      // The Python jobs the process submits (rewrites, CALL) run the workers' interpreter.
      env.put("PYSPARK_PYTHON", workerPython(conf));
      builder.redirectErrorStream(true);
      builder.redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
      // stdin stays a pipe from here: the process exits when it closes (this JVM ended).
      builder.redirectInput(ProcessBuilder.Redirect.PIPE);
      process = builder.start();
    } catch (IOException e) {
      server.shutdown();
      throw new IllegalStateException(
          "tsfile catalog: cannot start its Python process with " + python + " (set "
              + "spark.pyspark.python to an interpreter that has tsfile-catalog): "
              + e.getMessage(),
          e);
    }
    CatalogProcess started = new CatalogProcess(token, server, process, log, session);
    long timeout = conf.getLong(START_TIMEOUT, 120);
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeout);
    starting = started;
    try {
      started.awaitReady(deadline, timeout, python);
    } finally {
      starting = null;
    }
    return started;
  }

  /** The port {@code server} listens on, once its thread opened it (within 30 s). */
  private static int listeningPort(ClientServer server) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (true) {
      try {
        int port = server.getJavaServer().getListeningPort();
        if (port > 0) {
          return port;
        }
      } catch (NullPointerException e) {
        // Not opened yet.
      }
      if (System.nanoTime() > deadline) {
        server.shutdown();
        throw new IllegalStateException("tsfile catalog: its Py4J gateway did not start");
      }
      try {
        Thread.sleep(10);
      } catch (InterruptedException e) {
        server.shutdown();
        Thread.currentThread().interrupt();
        throw new IllegalStateException("tsfile catalog: interrupted starting its gateway", e);
      }
    }
  }

  /** Waits until the process attached, exited or ran out of time. */
  private void awaitReady(long deadline, long timeout, String python) {
    try {
      while (!ready.await(100, TimeUnit.MILLISECONDS)) {
        if (!process.isAlive()) {
          stop();
          throw new IllegalStateException(
              "tsfile catalog: its Python process (" + python + " -m " + MODULE
                  + ") exited with code " + process.exitValue() + " before it was ready"
                  + lastLogLine() + " (log: " + namedLog() + ")");
        }
        if (System.nanoTime() > deadline) {
          stop();
          throw new IllegalStateException(
              "tsfile catalog: its Python process (" + python + " -m " + MODULE
                  + ") was not ready within " + timeout + " s (" + START_TIMEOUT + ")"
                  + lastLogLine() + " (log: " + namedLog() + ")");
        }
      }
    } catch (InterruptedException e) {
      stop();
      Thread.currentThread().interrupt();
      throw new IllegalStateException("tsfile catalog: interrupted starting its process", e);
    }
  }

  /** ": <last line of the log>" (a Python error's class and message), or "". */
  private String lastLogLine() {
    try (RandomAccessFile file = new RandomAccessFile(log.toFile(), "r")) {
      long length = file.length();
      int size = (int) Math.min(length, 4096);
      byte[] tail = new byte[size];
      file.seek(length - size);
      file.readFully(tail);
      String[] lines = new String(tail, StandardCharsets.UTF_8).strip().split("\n");
      String last = lines[lines.length - 1].strip();
      return last.isEmpty() ? "" : ": " + last;
    } catch (IOException e) {
      return "";
    }
  }

  /** The driver's interpreter, as Spark's PythonRunner picks it. */
  private static String python(SparkConf conf) {
    String[] keys = {"spark.pyspark.driver.python", "spark.pyspark.python"};
    for (String key : keys) {
      if (conf.contains(key)) {
        return conf.get(key);
      }
    }
    return firstEnv("PYSPARK_DRIVER_PYTHON", "PYSPARK_PYTHON");
  }

  private static String workerPython(SparkConf conf) {
    return conf.contains("spark.pyspark.python")
        ? conf.get("spark.pyspark.python")
        : firstEnv("PYSPARK_PYTHON", "PYSPARK_PYTHON");
  }

  private static String firstEnv(String first, String second) {
    for (String name : new String[] {first, second}) {
      String value = System.getenv(name);
      if (value != null && !value.isEmpty()) {
        return value;
      }
    }
    return "python3";
  }
}

package io.tsfilecatalog.spark;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.HashMap;
import java.util.Map;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.RowLevelOperation;
import org.apache.spark.sql.connector.write.Write;
import org.apache.spark.sql.connector.write.WriteBuilder;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * One {@code UPDATE}, {@code MERGE INTO} or {@code DELETE FROM} as Spark's group-based
 * copy-on-write, a group being one part: the scan ({@link TsFileRewriteScanBuilder}) reads
 * every row of the parts the delegate picked, Spark computes the new rows of those parts (its
 * own UPDATE/MERGE/DELETE semantics), and the write replaces exactly those parts with them in
 * one commit against the version the scan read.
 *
 * <p>The delegate plans in the Python driver, so the parts it picked come back here and ride to
 * the write as the write options the delegate gave ({@code rewriteParts}, ...). The write is
 * Spark's Python-source write, fed row by row ({@link RowFedWrite}).
 */
class TsFileRowLevelOperation implements RowLevelOperation {
  private final TsFileTable table;
  private final Command command;
  /** What the scan planned: {@code {"parts": [...], "write_options": {...}}}; null before. */
  private JsonNode planned;
  /** What the scan read once Spark filtered it at run time; null when it did not. */
  private JsonNode filtered;

  TsFileRowLevelOperation(TsFileTable table, Command command) {
    this.table = table;
    this.command = command;
  }

  TsFileTable table() {
    return table;
  }

  @Override
  public Command command() {
    return command;
  }

  @Override
  public String description() {
    return "tsfile copy-on-write " + command;
  }

  @Override
  public ScanBuilder newScanBuilder(CaseInsensitiveStringMap options) {
    return new TsFileRewriteScanBuilder(table, options, this);
  }

  /**
   * Records the parts a scan of this operation reads. Spark may plan the scan more than once
   * for one statement (an UPDATE with a subquery reads the table twice); each must read the
   * same parts, which the write then replaces.
   */
  synchronized void planned(JsonNode rewrite) {
    if (planned != null && !planned.equals(rewrite)) {
      throw new IllegalStateException(
          "tsfile " + command + " on " + table.name() + ": two scans of one statement planned "
              + "different parts (" + planned + " and " + rewrite + ")");
    }
    planned = rewrite;
  }

  /**
   * Records the parts a scan of this operation reads once Spark filtered it at run time
   * ({@link TsFileRewriteScan#filter}). An UPDATE read twice filters its one scan twice, with
   * the same values; each must read the same parts.
   */
  synchronized void filtered(JsonNode rewrite) {
    if (filtered != null && !filtered.equals(rewrite)) {
      throw new IllegalStateException(
          "tsfile " + command + " on " + table.name() + ": two run-time filters of one "
              + "statement's scan read different parts (" + filtered + " and " + rewrite + ")");
    }
    filtered = rewrite;
  }

  /**
   * The write: Spark plans it before it runs the scan, so it is made again with the parts the
   * scan read ({@link RowFedWrite}) when its tasks start, after any run-time filter.
   */
  @Override
  public synchronized WriteBuilder newWriteBuilder(LogicalWriteInfo info) {
    if (planned == null) {
      throw new IllegalStateException(
          "tsfile " + command + " on " + table.name() + ": the write was planned before its scan");
    }
    return new WriteBuilder() {
      @Override
      public Write build() {
        return new RowFedWrite(
            write(info, planned),
            () -> write(info, read()),
            command.name(),
            info.queryId(),
            options(planned));
      }
    };
  }

  /** The parts the scan read: as filtered at run time, else as planned. */
  private synchronized JsonNode read() {
    return filtered != null ? filtered : planned;
  }

  private Write write(LogicalWriteInfo info, JsonNode rewrite) {
    return new TsFileWriteBuilder(table.schema(), options(rewrite), info, null).build();
  }

  private Map<String, String> options(JsonNode rewrite) {
    Map<String, String> options = new HashMap<>(table.writeOptions());
    // The delegate's copy-on-write options: which parts of which version the rows replace.
    options.putAll(Client.toMap(rewrite.get("write_options")));
    return options;
  }
}

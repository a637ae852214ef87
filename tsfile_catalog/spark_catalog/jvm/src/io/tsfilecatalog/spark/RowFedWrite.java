package io.tsfilecatalog.spark;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.metric.CustomTaskMetric;
import org.apache.spark.sql.connector.write.BatchWrite;
import org.apache.spark.sql.connector.write.DataWriter;
import org.apache.spark.sql.connector.write.DataWriterFactory;
import org.apache.spark.sql.connector.write.DeleteSummary;
import org.apache.spark.sql.connector.write.DeltaBatchWrite;
import org.apache.spark.sql.connector.write.DeltaWrite;
import org.apache.spark.sql.connector.write.DeltaWriter;
import org.apache.spark.sql.connector.write.DeltaWriterFactory;
import org.apache.spark.sql.connector.write.MergeSummary;
import org.apache.spark.sql.connector.write.PhysicalWriteInfo;
import org.apache.spark.sql.connector.write.UpdateSummary;
import org.apache.spark.sql.connector.write.Write;
import org.apache.spark.sql.connector.write.WriteSummary;
import org.apache.spark.sql.connector.write.WriterCommitMessage;
import org.apache.spark.sql.execution.datasources.v2.python.PythonWriterCommitMessage;

/**
 * Spark's Python-source write, fed row by row: what {@code ReplaceData} (the copy-on-write of
 * UPDATE, MERGE, DELETE) and {@code WriteDelta} ({@link Delta}) need; an insert-only MERGE's
 * append is one too, for its counts ({@link TsFileTable#insertingMerge}).
 *
 * <p>Spark's Python data writer takes its rows only as a whole iterator ({@code writeAll}); its
 * {@code write(row)} does nothing at all (measured on PySpark 4.2 and 4.3: it builds an
 * internal error and drops it, and the row), while {@code ReplaceData}'s tasks hand rows one at
 * a time. Each task's writer here keeps the rows it is given (copied: Spark reuses the row
 * object) and hands them to the Python writer as one iterator when the task commits. A task
 * holds its share of the rewritten rows in memory until then.
 *
 * <p>Spark commits the write with the statement's row counts (its {@link WriteSummary}), which
 * Spark's Python write drops: they are forwarded to the delegate, whose commit message carrying
 * them joins the tasks' ({@code tsfile_catalog/spark_catalog/row_counts.py}), and kept here for
 * the statement's result ({@link RowCounts}).
 */
class RowFedWrite extends ForwardingWrite {
  final Supplier<Write> atRun;
  private final String operation;
  private final String writeId;
  private final Map<String, String> options;
  /** Spark's counts as forwarded at commit; null before, or when Spark gave none. */
  private volatile ObjectNode counted;

  /**
   * {@code planned} describes the write while Spark plans it; {@code atRun} makes the one
   * that runs, when its tasks are about to start: a copy-on-write learns the parts it
   * replaces only as its scan is filtered at run time, after Spark planned the write.
   * {@code operation}: UPDATE, MERGE or DELETE; {@code writeId}: Spark's id of the write;
   * {@code options}: the write's, as planned (the table, the version the scan read).
   */
  RowFedWrite(
      Write planned,
      Supplier<Write> atRun,
      String operation,
      String writeId,
      Map<String, String> options) {
    super(planned);
    this.atRun = atRun;
    this.operation = operation;
    this.writeId = writeId;
    this.options = options;
  }

  @Override
  public BatchWrite toBatch() {
    return new Batch(atRun, this);
  }

  String operation() {
    return operation;
  }

  String writeId() {
    return writeId;
  }

  Map<String, String> options() {
    return options;
  }

  /** What {@link #counted} forwarded at commit (Spark's getters by name), or null. */
  ObjectNode counts() {
    return counted;
  }

  /**
   * {@code messages} with the delegate's message carrying {@code summary}'s counts, which
   * are kept for the statement's result; as they are when Spark gave no counts.
   */
  private WriterCommitMessage[] counted(WriterCommitMessage[] messages, WriteSummary summary) {
    ObjectNode counts = Client.object();
    if (summary instanceof UpdateSummary) {
      counts.put("numUpdatedRows", ((UpdateSummary) summary).numUpdatedRows());
      counts.put("numCopiedRows", ((UpdateSummary) summary).numCopiedRows());
    } else if (summary instanceof DeleteSummary) {
      counts.put("numDeletedRows", ((DeleteSummary) summary).numDeletedRows());
      counts.put("numCopiedRows", ((DeleteSummary) summary).numCopiedRows());
    } else if (summary instanceof MergeSummary) {
      MergeSummary merge = (MergeSummary) summary;
      counts.put("numTargetRowsCopied", merge.numTargetRowsCopied());
      counts.put("numTargetRowsDeleted", merge.numTargetRowsDeleted());
      counts.put("numTargetRowsUpdated", merge.numTargetRowsUpdated());
      counts.put("numTargetRowsInserted", merge.numTargetRowsInserted());
      counts.put("numTargetRowsMatchedUpdated", merge.numTargetRowsMatchedUpdated());
      counts.put("numTargetRowsMatchedDeleted", merge.numTargetRowsMatchedDeleted());
      counts.put(
          "numTargetRowsNotMatchedBySourceUpdated", merge.numTargetRowsNotMatchedBySourceUpdated());
      counts.put(
          "numTargetRowsNotMatchedBySourceDeleted", merge.numTargetRowsNotMatchedBySourceDeleted());
    } else {
      return messages;
    }
    ObjectNode request = Client.object();
    request.put("operation", operation);
    request.put("write_id", writeId);
    request.set("summary", counts);
    byte[] pickled = Base64.getDecoder().decode(Client.call("row_counts_message", request).asText());
    WriterCommitMessage[] out = Arrays.copyOf(messages, messages.length + 1);
    out[messages.length] = new PythonWriterCommitMessage(pickled);
    counted = counts;
    return out;
  }

  /**
   * Spark asks for the batch before it runs the query that feeds it, and for the writer
   * factory after: the write the batch wraps is made then, with what the scan read.
   */
  private static class Batch implements BatchWrite {
    private final Supplier<Write> atRun;
    final RowFedWrite write;
    private BatchWrite inner;

    Batch(Supplier<Write> atRun, RowFedWrite write) {
      this.atRun = atRun;
      this.write = write;
    }

    synchronized BatchWrite inner() {
      if (inner == null) {
        inner = atRun.get().toBatch();
      }
      return inner;
    }

    @Override
    public DataWriterFactory createBatchWriterFactory(PhysicalWriteInfo info) {
      return new Factory(inner().createBatchWriterFactory(info));
    }

    @Override
    public boolean useCommitCoordinator() {
      return inner().useCommitCoordinator();
    }

    @Override
    public void onDataWriterCommit(WriterCommitMessage message) {
      inner().onDataWriterCommit(message);
    }

    @Override
    public void commit(WriterCommitMessage[] messages) {
      inner().commit(messages);
    }

    @Override
    public void commit(WriterCommitMessage[] messages, WriteSummary summary) {
      inner().commit(write.counted(messages, summary), summary);
    }

    @Override
    public synchronized void abort(WriterCommitMessage[] messages) {
      if (inner != null) { // else no task ran: nothing to abort
        inner.abort(messages);
      }
    }
  }

  private static final class Factory implements DataWriterFactory {
    private static final long serialVersionUID = 1L;
    private final DataWriterFactory inner;

    Factory(DataWriterFactory inner) {
      this.inner = inner;
    }

    @Override
    public DataWriter<InternalRow> createWriter(int partitionId, long taskId) {
      return new Writer(inner.createWriter(partitionId, taskId));
    }
  }

  private static class Writer implements DataWriter<InternalRow> {
    private final DataWriter<InternalRow> inner;
    private final List<InternalRow> rows = new ArrayList<>();

    Writer(DataWriter<InternalRow> inner) {
      this.inner = inner;
    }

    @Override
    public void write(InternalRow row) {
      rows.add(row.copy());
    }

    @Override
    public void writeAll(java.util.Iterator<InternalRow> iterator) throws IOException {
      iterator.forEachRemaining(this::write);
    }

    @Override
    public WriterCommitMessage commit() throws IOException {
      inner.writeAll(rows.iterator());
      rows.clear();
      return inner.commit();
    }

    @Override
    public void abort() throws IOException {
      rows.clear();
      inner.abort();
    }

    @Override
    public void close() throws IOException {
      inner.close();
    }

    @Override
    public CustomTaskMetric[] currentMetricsValues() {
      return inner.currentMetricsValues();
    }
  }

  /**
   * The write of a row-level operation Spark writes as a delta ({@link TsFileDeltaOperation}):
   * its tasks are handed the changed rows as updates, which go to the Python writer as the
   * rows of an append; any other kind of change is refused (the delegate plans a delta only
   * for an UPDATE that keeps every row's key).
   */
  static final class Delta extends RowFedWrite implements DeltaWrite {
    Delta(Write planned, String operation, String writeId, Map<String, String> options) {
      super(planned, () -> planned, operation, writeId, options);
    }

    @Override
    public DeltaBatchWrite toBatch() {
      return new DeltaBatch(this);
    }
  }

  private static final class DeltaBatch extends Batch implements DeltaBatchWrite {
    DeltaBatch(Delta write) {
      super(write.atRun, write);
    }

    @Override
    public DeltaWriterFactory createBatchWriterFactory(PhysicalWriteInfo info) {
      return new DeltaFactory(inner().createBatchWriterFactory(info), write.operation());
    }
  }

  private static final class DeltaFactory implements DeltaWriterFactory {
    private static final long serialVersionUID = 1L;
    private final DataWriterFactory inner;
    private final String operation;

    DeltaFactory(DataWriterFactory inner, String operation) {
      this.inner = inner;
      this.operation = operation;
    }

    @Override
    public DeltaWriter<InternalRow> createWriter(int partitionId, long taskId) {
      return new DeltaRows(inner.createWriter(partitionId, taskId), operation);
    }
  }

  /** A task's updated rows, kept as {@link Writer} keeps a copy-on-write's. */
  private static final class DeltaRows extends Writer implements DeltaWriter<InternalRow> {
    private final String operation;

    DeltaRows(DataWriter<InternalRow> inner, String operation) {
      super(inner);
      this.operation = operation;
    }

    @Override
    public void update(InternalRow metadata, InternalRow id, InternalRow row) {
      write(row);
    }

    @Override
    public void insert(InternalRow row) {
      throw refused("an insert");
    }

    @Override
    public void delete(InternalRow metadata, InternalRow id) {
      throw refused("a delete");
    }

    @Override
    public void reinsert(InternalRow metadata, InternalRow row) {
      throw refused("a reinsert");
    }

    @Override
    public void write(InternalRow row) {
      super.write(row);
    }

    private IllegalStateException refused(String what) {
      return new IllegalStateException(
          "tsfile " + operation + " written as a delta got " + what + "; only updates of rows "
              + "that keep their key are written so");
    }
  }
}

package io.tsfilecatalog.spark;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.metric.CustomTaskMetric;
import org.apache.spark.sql.connector.write.BatchWrite;
import org.apache.spark.sql.connector.write.DataWriter;
import org.apache.spark.sql.connector.write.DataWriterFactory;
import org.apache.spark.sql.connector.write.PhysicalWriteInfo;
import org.apache.spark.sql.connector.write.Write;
import org.apache.spark.sql.connector.write.WriteSummary;
import org.apache.spark.sql.connector.write.WriterCommitMessage;

/**
 * Spark's Python-source write, fed row by row: what {@code ReplaceData} (the copy-on-write of
 * UPDATE, MERGE, DELETE) needs.
 *
 * <p>Spark's Python data writer takes its rows only as a whole iterator ({@code writeAll}); its
 * {@code write(row)} does nothing at all (measured on PySpark 4.2 and 4.3: it builds an
 * internal error and drops it, and the row), while {@code ReplaceData}'s tasks hand rows one at
 * a time. Each task's writer here keeps the rows it is given (copied: Spark reuses the row
 * object) and hands them to the Python writer as one iterator when the task commits. A task
 * holds its share of the rewritten rows in memory until then.
 */
final class RowFedWrite extends ForwardingWrite {
  private final Supplier<Write> atRun;

  /**
   * {@code planned} describes the write while Spark plans it; {@code atRun} makes the one
   * that runs, when its tasks are about to start: a copy-on-write learns the parts it
   * replaces only as its scan is filtered at run time, after Spark planned the write.
   */
  RowFedWrite(Write planned, Supplier<Write> atRun) {
    super(planned);
    this.atRun = atRun;
  }

  @Override
  public BatchWrite toBatch() {
    return new Batch(atRun);
  }

  /**
   * Spark asks for the batch before it runs the query that feeds it, and for the writer
   * factory after: the write the batch wraps is made then, with what the scan read.
   */
  private static final class Batch implements BatchWrite {
    private final Supplier<Write> atRun;
    private BatchWrite inner;

    Batch(Supplier<Write> atRun) {
      this.atRun = atRun;
    }

    private synchronized BatchWrite inner() {
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
      inner().commit(messages, summary);
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

  private static final class Writer implements DataWriter<InternalRow> {
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
}

package io.tsfilecatalog.spark;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Map;
import org.apache.spark.sql.connector.write.BatchWrite;
import org.apache.spark.sql.connector.write.DataWriterFactory;
import org.apache.spark.sql.connector.write.PhysicalWriteInfo;
import org.apache.spark.sql.connector.write.Write;
import org.apache.spark.sql.connector.write.WriteSummary;
import org.apache.spark.sql.connector.write.WriterCommitMessage;
import org.apache.spark.sql.types.StructType;

/**
 * An overwrite by condition (the writer's {@code replaceWhere}) whose straddling parts are
 * rewritten as Spark tasks when the write starts, before its own tasks, and taken by its commit
 * (tsfile_catalog/write/replace_staging.py says how). Only running the write starts them:
 * Spark builds writes while it plans, an EXPLAIN included. The pre-staging job's folder goes
 * after the commit or the abort.
 */
final class PrestagedWrite extends ForwardingWrite {
  private final ObjectNode request;

  /** {@code options}: the write's, whose {@code replaceStaged} names the pre-staging job. */
  PrestagedWrite(Write write, Map<String, String> options, StructType schema) {
    super(write);
    request = Client.object();
    request.set("options", Client.map(options));
    request.put("schema", schema.json());
  }

  @Override
  public BatchWrite toBatch() {
    return new Batch(described.toBatch(), request);
  }

  private static final class Batch implements BatchWrite {
    private final BatchWrite inner;
    private final ObjectNode request;

    Batch(BatchWrite inner, ObjectNode request) {
      this.inner = inner;
      this.request = request;
    }

    @Override
    public DataWriterFactory createBatchWriterFactory(PhysicalWriteInfo info) {
      // A failure here leaves nothing staged (the delegate removes what it staged).
      Client.call("prestage_replace", request);
      return inner.createBatchWriterFactory(info);
    }

    @Override
    public boolean useCommitCoordinator() {
      return inner.useCommitCoordinator();
    }

    @Override
    public void onDataWriterCommit(WriterCommitMessage message) {
      inner.onDataWriterCommit(message);
    }

    @Override
    public void commit(WriterCommitMessage[] messages) {
      try {
        inner.commit(messages);
      } finally {
        release();
      }
    }

    @Override
    public void commit(WriterCommitMessage[] messages, WriteSummary summary) {
      try {
        inner.commit(messages, summary);
      } finally {
        release();
      }
    }

    @Override
    public void abort(WriterCommitMessage[] messages) {
      try {
        inner.abort(messages);
      } finally {
        release();
      }
    }

    private void release() {
      try {
        Client.call("release_replace", request);
      } catch (Exception e) { // a refusal is Spark's AnalysisException, a checked one
        // The folder is a job's staging: VACUUM removes what is left of it.
      }
    }
  }
}

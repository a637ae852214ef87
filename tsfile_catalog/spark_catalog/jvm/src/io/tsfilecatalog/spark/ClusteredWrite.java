package io.tsfilecatalog.spark;

import java.util.List;
import org.apache.spark.sql.connector.distributions.Distribution;
import org.apache.spark.sql.connector.distributions.Distributions;
import org.apache.spark.sql.connector.expressions.Expression;
import org.apache.spark.sql.connector.expressions.Expressions;
import org.apache.spark.sql.connector.expressions.SortOrder;
import org.apache.spark.sql.connector.write.BatchWrite;
import org.apache.spark.sql.connector.write.RequiresDistributionAndOrdering;
import org.apache.spark.sql.connector.write.Write;
import org.apache.spark.sql.connector.write.streaming.StreamingWrite;

/**
 * A write into a catalog table that asks Spark to cluster its rows by the TAG columns, as
 * Catalog.sql's writes do (tsfile_catalog/sql/write_distribution.py says why); the Python
 * writer sorts each task's rows by (TAG, time). Not strictly required, so Spark's adaptive
 * execution sizes the tasks (a rebalance): a device may still be split over tasks, which only
 * costs a chunk. Everything else is the wrapped Python-source write.
 */
final class ClusteredWrite extends ForwardingWrite implements RequiresDistributionAndOrdering {
  private final List<String> tags;

  ClusteredWrite(Write write, List<String> tags) {
    super(write);
    this.tags = tags;
  }

  @Override
  public Distribution requiredDistribution() {
    Expression[] clustering = new Expression[tags.size()];
    for (int i = 0; i < clustering.length; i++) {
      clustering[i] = Expressions.column(tags.get(i));
    }
    return Distributions.clustered(clustering);
  }

  @Override
  public boolean distributionStrictlyRequired() {
    return false;
  }

  /**
   * None: each task's writer orders its rows by (TAG, time) itself, as it must for any input
   * (tsfile_catalog/formats/tsfile/sort.py), and the runs of one device a shuffle hands over
   * cost it less to put in place than Spark's sort of every row costs.
   */
  @Override
  public SortOrder[] requiredOrdering() {
    return new SortOrder[0];
  }

  @Override
  public BatchWrite toBatch() {
    return described.toBatch();
  }

  @Override
  public StreamingWrite toStreaming() {
    return described.toStreaming();
  }
}

package io.tsfilecatalog.spark;

import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.connector.distributions.Distribution;
import org.apache.spark.sql.connector.distributions.Distributions;
import org.apache.spark.sql.connector.expressions.Expression;
import org.apache.spark.sql.connector.expressions.Expressions;
import org.apache.spark.sql.connector.expressions.SortDirection;
import org.apache.spark.sql.connector.expressions.SortOrder;
import org.apache.spark.sql.connector.write.BatchWrite;
import org.apache.spark.sql.connector.write.RequiresDistributionAndOrdering;
import org.apache.spark.sql.connector.write.Write;
import org.apache.spark.sql.connector.write.streaming.StreamingWrite;

/**
 * A write into a catalog table that asks Spark to cluster its rows by the TAG columns and sort
 * them by (TAG, time) in each task, as Catalog.sql's writes do (tsfile_catalog/sql/
 * write_distribution.py says why). Not strictly required, so Spark's adaptive execution sizes
 * the tasks (a rebalance): a device may still be split over tasks, which only costs a chunk.
 * Everything else is the wrapped Python-source write.
 */
final class ClusteredWrite extends ForwardingWrite implements RequiresDistributionAndOrdering {
  private final List<String> tags;
  private final String time;

  ClusteredWrite(Write write, List<String> tags, String time) {
    super(write);
    this.tags = tags;
    this.time = time;
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

  @Override
  public SortOrder[] requiredOrdering() {
    List<String> keys = new ArrayList<>(tags);
    keys.add(time);
    SortOrder[] order = new SortOrder[keys.size()];
    for (int i = 0; i < order.length; i++) {
      order[i] = Expressions.sort(Expressions.column(keys.get(i)), SortDirection.ASCENDING);
    }
    return order;
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

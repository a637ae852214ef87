package io.tsfilecatalog.spark;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Collections;
import java.util.List;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.SparkSessionExtensions;
import org.apache.spark.sql.catalyst.analysis.ResolvedTable;
import org.apache.spark.sql.catalyst.plans.logical.DescribeRelation;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.SparkStrategy;
import org.apache.spark.sql.execution.datasources.v2.DescribeTableExec;
import scala.collection.immutable.Seq;
import scala.jdk.javaapi.CollectionConverters;
import scala.runtime.AbstractFunction1;

/**
 * A planner strategy: Spark's own {@code DESCRIBE [TABLE] [EXTENDED]} of a tsfile table, with
 * the rows Spark's {@link DescribeTableExec} gives, of a copy of the table whose schema the
 * delegate describes ({@code describe_columns}: TAG columns commented {@code TAG}).
 *
 * <p>Only this statement sees that schema: Spark takes a table's columns, comments included,
 * as the schema of every read, so the loaded table itself carries no comment. Anything else
 * (a column's DESCRIBE, other tables, Spark's own v1 tables) is left to Spark's strategies.
 */
final class DescribeTables extends SparkStrategy {
  /** Adds the strategy to the planner of every session {@code extensions} builds. */
  static void inject(SparkSessionExtensions extensions) {
    extensions.injectPlannerStrategy(
        new AbstractFunction1<SparkSession, SparkStrategy>() {
          @Override
          public SparkStrategy apply(SparkSession session) {
            return new DescribeTables();
          }
        });
  }

  @Override
  public Seq<SparkPlan> apply(LogicalPlan plan) {
    if (!(plan instanceof DescribeRelation)
        || !(((DescribeRelation) plan).relation() instanceof ResolvedTable)) {
      return none();
    }
    DescribeRelation describe = (DescribeRelation) plan;
    ResolvedTable resolved = (ResolvedTable) describe.relation();
    if (!(resolved.table() instanceof TsFileTable)) {
      return none();
    }
    TsFileTable table = (TsFileTable) resolved.table();
    ObjectNode request = Client.object();
    request.set("scan", table.scanDescription());
    request.put("schema", table.schema().json());
    String described = Client.call("describe_columns", request).asText();
    SparkPlan exec =
        new DescribeTableExec(
            describe.output(),
            resolved.catalog().name(),
            resolved.identifier(),
            table.withSchema(described),
            describe.isExtended());
    return CollectionConverters.asScala(Collections.singletonList(exec)).toList();
  }

  private static Seq<SparkPlan> none() {
    List<SparkPlan> empty = Collections.emptyList();
    return CollectionConverters.asScala(empty).toList();
  }
}

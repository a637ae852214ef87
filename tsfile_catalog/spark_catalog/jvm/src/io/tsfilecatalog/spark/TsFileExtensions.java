package io.tsfilecatalog.spark;

import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.SparkSessionExtensions;
import org.apache.spark.sql.catalyst.parser.ParserInterface;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.rules.Rule;
import scala.runtime.AbstractFunction1;
import scala.runtime.AbstractFunction2;
import scala.runtime.BoxedUnit;

/**
 * {@code spark.sql.extensions = io.tsfilecatalog.spark.TsFileExtensions}: the parser of the
 * catalog's own statements ({@link StatementParser}) and the plugin's optimizer rules ({@link
 * LocalAnswers}, {@link KeyAssignments}) in every session of the application, including the ones Spark Connect and the Thrift server create per client, which
 * {@code tsfile_catalog.register} never sees.
 *
 * <p>Spark's DESCRIBE of a tsfile table is planned by {@link DescribeTables}, which marks its
 * TAG columns.
 *
 * <p>With the plugin as {@code spark_catalog}, its analysis check ({@link
 * SessionCatalogCheck}) refuses what Spark would create over a tsfile table's name without
 * asking the catalog.
 *
 * <p>Both rules must run after Spark's scan pushdown, which no injection point offers, so the
 * injected rule only installs them in its session's extra optimizations (the batch {@code
 * register} installs them in) and changes no plan itself.
 */
public final class TsFileExtensions extends AbstractFunction1<SparkSessionExtensions, BoxedUnit> {
  @Override
  public BoxedUnit apply(SparkSessionExtensions extensions) {
    PluginClasses.load();
    // The statements Spark's parser lacks (DESCRIBE HISTORY, SHOW PARTS, OPTIMIZE, ...).
    extensions.injectParser(
        new AbstractFunction2<SparkSession, ParserInterface, ParserInterface>() {
          @Override
          public ParserInterface apply(SparkSession session, ParserInterface parser) {
            return StatementParser.wrap(session, parser);
          }
        });
    // tsfile('<url>') and tsfile.`<url>`: the plugin's table of that location.
    extensions.injectHintResolutionRule(
        new AbstractFunction1<SparkSession, Rule<LogicalPlan>>() {
          @Override
          public Rule<LogicalPlan> apply(SparkSession session) {
            return new UrlReferences(session);
          }
        });
    // writeTo(t).option("mergeSchema", "true").append(): the table as the write leaves it.
    extensions.injectHintResolutionRule(
        new AbstractFunction1<SparkSession, Rule<LogicalPlan>>() {
          @Override
          public Rule<LogicalPlan> apply(SparkSession session) {
            return new MergeSchemaWrites.Mark(session);
          }
        });
    // spark.read.format("tsfile").load(path): the plugin's scan of the table at the path.
    PathReads.inject(extensions);
    // UPDATE, MERGE, DELETE through spark.sql: their predicate and SET in the history.
    extensions.injectHintResolutionRule(
        new AbstractFunction1<SparkSession, Rule<LogicalPlan>>() {
          @Override
          public Rule<LogicalPlan> apply(SparkSession session) {
            return new HistoryParameters(session);
          }
        });
    // UPDATE, MERGE, DELETE through spark.sql: their row counts as the result.
    RowCounts.inject(extensions);
    // DESCRIBE [EXTENDED] of a tsfile table: Spark's rows, its TAG columns marked.
    DescribeTables.inject(extensions);
    extensions.injectOptimizerRule(
        new AbstractFunction1<SparkSession, Rule<LogicalPlan>>() {
          @Override
          public Rule<LogicalPlan> apply(SparkSession session) {
            LocalAnswers.install(session);
            KeyAssignments.install(session);
            return new Installed();
          }
        });
    // The change data feed: readChangeFeed on a table's relation, and table_changes(...).
    extensions.injectResolutionRule(
        new AbstractFunction1<SparkSession, Rule<LogicalPlan>>() {
          @Override
          public Rule<LogicalPlan> apply(SparkSession session) {
            return new ChangeFeeds.Resolve();
          }
        });
    extensions.injectResolutionRule(
        new AbstractFunction1<SparkSession, Rule<LogicalPlan>>() {
          @Override
          public Rule<LogicalPlan> apply(SparkSession session) {
            return new MergeSchemaWrites.Resolve();
          }
        });
    extensions.injectTableFunction(ChangeFeeds.tableFunction());
    // A session catalog's check of what Spark creates in its built-in catalog directly.
    extensions.injectCheckRule(
        new AbstractFunction1<SparkSession, scala.Function1<LogicalPlan, BoxedUnit>>() {
          @Override
          public scala.Function1<LogicalPlan, BoxedUnit> apply(SparkSession session) {
            return new SessionCatalogCheck(session);
          }
        });
    return BoxedUnit.UNIT;
  }

  /** The injected rule: nothing to do once the rules are installed. */
  private static final class Installed extends Rule<LogicalPlan> {
    @Override
    public LogicalPlan apply(LogicalPlan plan) {
      return plan;
    }
  }
}

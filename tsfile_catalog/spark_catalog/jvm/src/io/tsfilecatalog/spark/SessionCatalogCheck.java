package io.tsfilecatalog.spark;

import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.TableIdentifier;
import org.apache.spark.sql.catalyst.analysis.PersistedView$;
import org.apache.spark.sql.catalyst.catalog.CatalogTable;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.connector.catalog.CatalogPlugin;
import org.apache.spark.sql.execution.command.AlterTableRenameCommand;
import org.apache.spark.sql.execution.command.CreateDataSourceTableAsSelectCommand;
import org.apache.spark.sql.execution.command.CreateDataSourceTableCommand;
import org.apache.spark.sql.execution.command.CreateTableCommand;
import org.apache.spark.sql.execution.command.CreateViewCommand;
import org.apache.spark.sql.execution.datasources.CreateTable;
import scala.runtime.AbstractFunction1;
import scala.runtime.BoxedUnit;

/**
 * An analysis check of {@link TsFileSessionCatalog}'s sessions: Spark creates (and renames) a
 * table of a v1 source (Parquet, ORC, CSV, Hive, ...) and a persistent view in its built-in
 * catalog without asking the session catalog, so a name the warehouse holds is refused here,
 * before the command runs, as the session catalog refuses it for every other create.
 */
final class SessionCatalogCheck extends AbstractFunction1<LogicalPlan, BoxedUnit> {
  private final SparkSession session;

  SessionCatalogCheck(SparkSession session) {
    this.session = session;
  }

  @Override
  public BoxedUnit apply(LogicalPlan plan) {
    TableIdentifier name = null;
    String statement = null;
    String provider = null;
    CatalogTable table = created(plan);
    if (table != null) {
      name = table.identifier();
      statement = "CREATE TABLE";
      provider = table.provider().getOrElse(() -> null);
    } else if (plan instanceof AlterTableRenameCommand) {
      AlterTableRenameCommand rename = (AlterTableRenameCommand) plan;
      TableIdentifier to = rename.newName();
      // RENAME TO keeps the table's database when the new name gives none (Spark's rule).
      name = to.database().isDefined() ? to : to.copy(to.table(), rename.oldName().database(),
          to.catalog());
      statement = "RENAME TO";
    } else if (plan instanceof CreateViewCommand) {
      CreateViewCommand create = (CreateViewCommand) plan;
      if (create.viewType() == PersistedView$.MODULE$) {
        name = create.name();
        statement = "CREATE VIEW";
      }
    }
    if (name == null) {
      return BoxedUnit.UNIT;
    }
    String catalog = name.catalog().getOrElse(() -> "spark_catalog");
    if (!"spark_catalog".equals(catalog)) {
      return BoxedUnit.UNIT;
    }
    CatalogPlugin sessionCatalog = session.sessionState().catalogManager().v2SessionCatalog();
    if (sessionCatalog instanceof TsFileSessionCatalog) {
      String database =
          name.database().getOrElse(() -> session.sessionState().catalog().getCurrentDatabase());
      TsFileSessionCatalog plugin = (TsFileSessionCatalog) sessionCatalog;
      plugin.checkBuiltInCreate(database, name.table(), statement, provider);
      // A namespace only the warehouse holds exists for Spark's tables too.
      plugin.builtInNamespace(new String[] {database});
    }
    return BoxedUnit.UNIT;
  }

  /**
   * The table a v1 create makes: the analyzed command (Spark's data source analysis has turned
   * CREATE TABLE and CTAS into it by now), or the plan before that, or Hive's CTAS (found by
   * name: Hive's classes are on the classpath only with Hive support).
   */
  private static CatalogTable created(LogicalPlan plan) {
    if (plan instanceof CreateTable) {
      return ((CreateTable) plan).tableDesc();
    }
    if (plan instanceof CreateDataSourceTableCommand) {
      return ((CreateDataSourceTableCommand) plan).table();
    }
    if (plan instanceof CreateDataSourceTableAsSelectCommand) {
      return ((CreateDataSourceTableAsSelectCommand) plan).table();
    }
    if (plan instanceof CreateTableCommand) {
      return ((CreateTableCommand) plan).table();
    }
    if (plan.getClass().getName().endsWith(".CreateHiveTableAsSelectCommand")) {
      try {
        return (CatalogTable) plan.getClass().getMethod("tableDesc").invoke(plan);
      } catch (ReflectiveOperationException e) {
        throw new IllegalStateException("tsfile session catalog: " + e, e);
      }
    }
    return null;
  }
}
